import { Injectable } from '@nestjs/common';
import type { DeepPartial } from 'typeorm';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { RuntimeServiceOperationEntity } from './runtime-service-operation.entity';

/** The runtime_service_operations table: one record per start / stop / restart / reconciliation. */
@Injectable()
export class RuntimeOperationsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  private get repo() {
    return this.orm(RuntimeServiceOperationEntity);
  }

  /** A new (unsaved) operation record. */
  build(fields: DeepPartial<RuntimeServiceOperationEntity>): RuntimeServiceOperationEntity {
    return this.repo.create(fields);
  }

  /** An id chosen before the insert (the process log is named after it). */
  async newId(): Promise<string> {
    return (await this.unscoped<{ id: string }>('no table: an id drawn before the insert', `SELECT gen_random_uuid() AS id`))[0].id;
  }

  async save(op: RuntimeServiceOperationEntity): Promise<RuntimeServiceOperationEntity> {
    return this.repo.save(op);
  }
}
