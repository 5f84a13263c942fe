import { Injectable } from '@nestjs/common';
import { InstanceRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

/** The health check's round trip to the database (no table of its own). */
@Injectable()
export class SystemRepository extends InstanceRepository {
  constructor(db: Db) {
    super(db);
  }

  /** `SELECT 1` straight on the pool (never inside a request transaction); rejects when the database is unreachable. */
  async ping(): Promise<void> {
    await this.rows('SELECT 1', [], { detached: true });
  }
}
