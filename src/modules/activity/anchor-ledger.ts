import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { isUuid } from '../../common/http/uuid';

/** The newest anchor this instance signed for a company, as kept outside the database. */
export interface LedgerAnchor {
  seq: string;
  /** hex */
  hash: string;
  /** ISO 8601 with milliseconds */
  anchoredAt: string;
  keyId: string;
  /** base64 */
  signature: string;
}

/**
 * The instance's own memory of its anchors: for each company, the newest anchor it signed, in
 * `<data dir>/audit-anchors/<companyId>.json` (0600, folder 0700). Whoever can write the database
 * can delete anchor rows; they cannot reach this file, so verify and export report an anchor that
 * this instance made and the database no longer has (`anchor_missing`), and a chain cut back
 * below it. Written after the anchor's row commits; only ever moves forward.
 */
@Injectable()
export class AnchorLedger {
  private readonly logger = new Logger('AnchorLedger');
  private readonly dir: string;

  constructor(config: AppConfig) {
    this.dir = path.join(config.dataDir, 'audit-anchors');
  }

  private fileOf(companyId: string): string | null {
    return isUuid(companyId) ? path.join(this.dir, `${companyId.toLowerCase()}.json`) : null;
  }

  /** The newest anchor this instance signed for the company, or null. */
  newest(companyId: string): LedgerAnchor | null {
    const file = this.fileOf(companyId);
    if (!file) return null;
    let raw: string;
    try {
      raw = fs.readFileSync(file, 'utf8');
    } catch {
      return null;
    }
    try {
      const a = JSON.parse(raw) as LedgerAnchor;
      if (
        typeof a.seq === 'string' &&
        /^[0-9a-f]{64}$/.test(a.hash) &&
        typeof a.anchoredAt === 'string' &&
        typeof a.keyId === 'string' &&
        typeof a.signature === 'string'
      )
        return a;
    } catch {
      /* reported below */
    }
    this.logger.error(`the anchor ledger ${file} is unreadable; verify relies on the database's anchors alone for this company`);
    return null;
  }

  /** Records `a` when it is newer than what the ledger holds. */
  record(companyId: string, a: LedgerAnchor): void {
    const file = this.fileOf(companyId);
    if (!file) return;
    const current = this.newest(companyId);
    if (current && (BigInt(current.seq) > BigInt(a.seq) || (current.seq === a.seq && current.anchoredAt >= a.anchoredAt))) return;
    try {
      fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
      fs.writeFileSync(tmp, JSON.stringify(a), { mode: 0o600 });
      fs.renameSync(tmp, file);
    } catch (err) {
      this.logger.error(`could not record the anchor of company ${companyId} in ${this.dir}: ${(err as Error).message}`);
    }
  }
}
