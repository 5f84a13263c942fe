import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { AssetsRepository } from './assets.repository';
import { AssetEntity } from './asset.entity';
import { StorageService } from './storage.service';

export interface NewAsset {
  companyId: string;
  kind: string;
  contentType: string;
  data: Buffer;
  originalFilename?: string | null;
  actor?: Actor;
}

@Injectable()
export class AssetsService {
  constructor(
    private readonly db: Db,
    private readonly assets: AssetsRepository,
    private readonly storage: StorageService,
  ) {}

  async create(input: NewAsset): Promise<AssetEntity> {
    const id = this.assets.newId();
    const key = this.storage.keyFor(input.companyId, 'assets', id);
    const stored = await this.storage.put(key, input.data);
    // if the transaction rolls back, the file is orphaned but unreachable; remove it then
    return this.assets.insert({
      id,
      companyId: input.companyId,
      kind: input.kind,
      contentType: input.contentType,
      byteSize: stored.size,
      sha256: stored.sha256,
      storageKey: key,
      originalFilename: input.originalFilename ?? null,
      createdByUserId: input.actor?.kind === 'board' ? input.actor.userId : null,
      createdByAgentId: input.actor?.kind === 'agent' ? input.actor.agentId : null,
    });
  }

  async findInCompany(companyId: string, assetId: string): Promise<AssetEntity | null> {
    if (!isUuid(assetId)) return null;
    return this.assets.findInCompany(companyId, assetId);
  }

  /** The asset of the route's company (resolved and checked by the guard; undefined when it knows no such asset): 404 otherwise. */
  async getInRoute(companyId: string | undefined, assetId: string): Promise<AssetEntity> {
    const asset = companyId ? await this.findInCompany(companyId, assetId) : null;
    if (!asset) throw notFound('Asset');
    return asset;
  }

  /** Deletes the record now and the bytes once the transaction commits. */
  async remove(asset: AssetEntity): Promise<void> {
    await this.assets.delete(asset.companyId, asset.id);
    this.db.afterCommit(() => this.storage.remove(asset.storageKey));
  }

  read(asset: AssetEntity) {
    return this.storage.read(asset.storageKey);
  }
}
