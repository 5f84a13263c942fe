import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { DeepPartial } from 'typeorm';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { AssetEntity } from './asset.entity';

const COLUMNS = `id, company_id AS "companyId", kind, content_type AS "contentType", byte_size AS "byteSize", sha256,
  storage_key AS "storageKey", original_filename AS "originalFilename", created_by_user_id AS "createdByUserId",
  created_by_agent_id AS "createdByAgentId", created_at AS "createdAt"`;

/** The only place the `assets` table is read and written (the bytes live in StorageService). */
@Injectable()
export class AssetsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** A fresh id, known before the bytes are stored under it. */
  newId(): string {
    return randomUUID();
  }

  insert(values: DeepPartial<AssetEntity>): Promise<AssetEntity> {
    const repo = this.orm(AssetEntity);
    return repo.save(repo.create(values));
  }

  findInCompany(companyId: string, assetId: string): Promise<AssetEntity | null> {
    return this.row<AssetEntity>(companyId, `SELECT ${COLUMNS} FROM assets WHERE company_id = $1 AND id = $2`, [assetId]);
  }

  async delete(companyId: string, assetId: string): Promise<void> {
    await this.rows(companyId, `DELETE FROM assets WHERE company_id = $1 AND id = $2`, [assetId]);
  }
}
