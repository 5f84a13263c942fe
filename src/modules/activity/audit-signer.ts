import { createHash, createPrivateKey, createPublicKey, KeyObject, sign, verify } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';

/** PKCS#8 wrapping of a raw 32-byte Ed25519 seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface AnchorStatement {
  companyId: string;
  seq: string;
  hash: Buffer;
  anchoredAt: Date;
}

/** The bytes an anchor's signature covers (scripts/verify-activity-chain.js builds the same). */
export function anchorMessage(a: AnchorStatement): Buffer {
  return Buffer.from(
    `service-activity-anchor/v1\n${a.companyId}\n${a.seq}\n${a.hash.toString('hex')}\n${a.anchoredAt.toISOString()}`,
    'utf8',
  );
}

/** The public key id: the first 16 hex digits of the SHA-256 of its SPKI DER. */
export function keyIdOf(spkiBase64: string): string {
  return createHash('sha256').update(Buffer.from(spkiBase64, 'base64')).digest('hex').slice(0, 16);
}

/** How an anchor's signature checks against the keys an instance trusts. */
export type AnchorCheck = 'valid' | 'untrusted_key' | 'bad_signature';

/**
 * The instance's anchor signing key (Ed25519, from the configured seed), and the public keys it
 * trusts: its own and the operator-pinned ones (SERVICE_AUDIT_TRUSTED_KEYS). Neither comes from
 * the database: an anchor is checked with the trusted key its key id names, never with the public
 * key stored in its own row.
 */
@Injectable()
export class AuditSigner {
  private readonly privateKey: KeyObject;
  /** SPKI DER, base64 */
  readonly publicKey: string;
  readonly keyId: string;
  private readonly trusted = new Map<string, { spki: string; key: KeyObject }>();

  constructor(config: AppConfig) {
    this.privateKey = createPrivateKey({
      key: Buffer.concat([ED25519_PKCS8_PREFIX, config.audit.signingKey]),
      format: 'der',
      type: 'pkcs8',
    });
    this.publicKey = createPublicKey(this.privateKey).export({ format: 'der', type: 'spki' }).toString('base64');
    this.keyId = keyIdOf(this.publicKey);
    for (const spki of [this.publicKey, ...config.audit.trustedPublicKeys]) {
      this.trusted.set(keyIdOf(spki), { spki, key: createPublicKey({ key: Buffer.from(spki, 'base64'), format: 'der', type: 'spki' }) });
    }
  }

  sign(a: AnchorStatement): Buffer {
    return sign(null, anchorMessage(a), this.privateKey);
  }

  /** The trusted public keys (own first), SPKI DER base64, with their ids. */
  trustedKeys(): Array<{ keyId: string; publicKey: string }> {
    return [...this.trusted].map(([keyId, k]) => ({ keyId, publicKey: k.spki }));
  }

  /** Checks an anchor's signature with the trusted key named by `keyId`. */
  check(a: AnchorStatement, keyId: string, signature: Buffer): AnchorCheck {
    const k = this.trusted.get(keyId);
    if (!k) return 'untrusted_key';
    try {
      return verify(null, anchorMessage(a), k.key, signature) ? 'valid' : 'bad_signature';
    } catch {
      return 'bad_signature';
    }
  }
}
