import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { badRequest } from '../../common/errors/domain-error';

export interface StoredObject {
  key: string;
  sha256: string;
  size: number;
}

/** Where bytes live. The local disk provider is the default; an S3-compatible one can implement the same. */
export interface StorageProvider {
  put(key: string, data: Buffer): Promise<void>;
  read(key: string, range?: { start: number; end: number }): NodeJS.ReadableStream;
  size(key: string): Promise<number | undefined>;
  remove(key: string): Promise<void>;
}

const KEY_RE = /^[0-9a-f-]{36}(\/[A-Za-z0-9_-]+)+\/[A-Za-z0-9._-]+$/;

class LocalDiskProvider implements StorageProvider {
  constructor(private readonly root: string) {}

  /** Keys are company-prefixed relative paths; anything that could leave the root is refused. */
  private pathOf(key: string): string {
    if (!KEY_RE.test(key) || key.includes('..')) throw badRequest('Invalid storage key');
    const p = path.resolve(this.root, key);
    if (!p.startsWith(this.root + path.sep)) throw badRequest('Invalid storage key');
    return p;
  }

  async put(key: string, data: Buffer): Promise<void> {
    const p = this.pathOf(key);
    await fs.promises.mkdir(path.dirname(p), { recursive: true });
    const tmp = `${p}.tmp-${process.pid}-${Date.now()}`;
    await fs.promises.writeFile(tmp, data, { mode: 0o600 });
    await fs.promises.rename(tmp, p);
  }

  read(key: string, range?: { start: number; end: number }): NodeJS.ReadableStream {
    return fs.createReadStream(this.pathOf(key), range);
  }

  async size(key: string): Promise<number | undefined> {
    try {
      return (await fs.promises.stat(this.pathOf(key))).size;
    } catch {
      return undefined;
    }
  }

  async remove(key: string): Promise<void> {
    await fs.promises.rm(this.pathOf(key), { force: true });
  }
}

@Injectable()
export class StorageService {
  private readonly provider: StorageProvider;
  readonly root: string;

  constructor(config: AppConfig) {
    this.root = path.resolve(config.dataDir, 'storage');
    this.provider = new LocalDiskProvider(this.root);
  }

  keyFor(companyId: string, area: string, id: string): string {
    return `${companyId}/${area}/${id}`;
  }

  async put(key: string, data: Buffer): Promise<StoredObject> {
    await this.provider.put(key, data);
    return { key, sha256: createHash('sha256').update(data).digest('hex'), size: data.length };
  }

  read(key: string, range?: { start: number; end: number }): NodeJS.ReadableStream {
    return this.provider.read(key, range);
  }

  size(key: string): Promise<number | undefined> {
    return this.provider.size(key);
  }

  async remove(key: string): Promise<void> {
    await this.provider.remove(key);
  }

  /** Removes every object of a company (company delete). */
  async removeCompany(companyId: string): Promise<void> {
    if (!/^[0-9a-f-]{36}$/.test(companyId)) return;
    await fs.promises.rm(path.join(this.root, companyId), { recursive: true, force: true });
  }
}
