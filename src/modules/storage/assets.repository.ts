import { Injectable } from '@nestjs/common';
import type { DeepPartial } from 'typeorm';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { AssetEntity } from './asset.entity';

/** The only place the `assets` table is read and written (the bytes live in StorageService). */
@Injectable()
export class AssetsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  private get entities() {
    return this.db.repo(AssetEntity);
  }

  /** A fresh id from the database, known before the bytes are stored under it. */
  async newId(): Promise<string> {
    return (await this.db.query<{ id: string }>('SELECT gen_random_uuid() AS id'))[0].id;
  }

  insert(values: DeepPartial<AssetEntity>): Promise<AssetEntity> {
    const repo = this.entities;
    return repo.save(repo.create(values));
  }

  findInCompany(companyId: string, assetId: string): Promise<AssetEntity | null> {
    return this.entities.findOne({ where: { id: assetId, companyId: this.scope(companyId) } });
  }

  /** By id in any company (the caller checks access to its company). */
  findById(assetId: string): Promise<AssetEntity | null> {
    return this.entities.findOne({ where: { id: assetId } });
  }

  async delete(companyId: string, assetId: string): Promise<void> {
    await this.entities.delete({ id: assetId, companyId: this.scope(companyId) });
  }
}
