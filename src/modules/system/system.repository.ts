import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db.service';

/** The health check's round trip to the database (no table of its own). */
@Injectable()
export class SystemRepository {
  constructor(private readonly db: Db) {}

  /** `SELECT 1` straight on the pool (never inside a request transaction); rejects when the database is unreachable. */
  async ping(): Promise<void> {
    await this.db.dataSource.query('SELECT 1');
  }
}
