import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager, EntityTarget, ObjectLiteral, Repository } from 'typeorm';

interface TxContext {
  manager: EntityManager;
  afterCommit: Array<() => unknown>;
}

const als = new AsyncLocalStorage<TxContext>();

/**
 * The one way domain code reaches the database. Inside `transaction()` (opened per mutating
 * request by the activity interceptor) every repository shares that transaction, so a mutation
 * and its activity record commit together or not at all.
 */
@Injectable()
export class Db {
  private readonly logger = new Logger('Db');

  constructor(readonly dataSource: DataSource) {}

  get manager(): EntityManager {
    return als.getStore()?.manager ?? this.dataSource.manager;
  }

  get inTransaction(): boolean {
    return als.getStore() !== undefined;
  }

  repo<T extends ObjectLiteral>(entity: EntityTarget<T>): Repository<T> {
    return this.manager.getRepository(entity);
  }

  query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    return this.manager.query(sql, params) as Promise<T[]>;
  }

  /** Runs fn in a transaction; nested calls join the outer one. After-commit hooks run once it commits. */
  async transaction<T>(fn: (manager: EntityManager) => Promise<T>): Promise<T> {
    const current = als.getStore();
    if (current) return fn(current.manager);
    const hooks: Array<() => unknown> = [];
    const result = await this.dataSource.transaction((manager) => als.run({ manager, afterCommit: hooks }, () => fn(manager)));
    for (const hook of hooks) {
      try {
        await hook();
      } catch (err) {
        this.logger.error(`after-commit hook failed: ${(err as Error).message}`);
      }
    }
    return result;
  }

  /** Work that must only happen once the current transaction has committed (wake a dispatcher, kill a process). */
  afterCommit(fn: () => unknown): void {
    const current = als.getStore();
    if (current) current.afterCommit.push(fn);
    else
      void Promise.resolve()
        .then(fn)
        .catch((err) => this.logger.error(`after-commit hook failed: ${(err as Error).message}`));
  }
}
