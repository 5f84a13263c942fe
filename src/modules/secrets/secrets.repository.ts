import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { SecretAccessEventEntity } from './secret-access-event.entity';
import { SecretEntity, SecretVersionEntity } from './secret.entity';

/** A run as the run-bound secret routes check it. */
export interface SecretRunRow {
  status: string;
  invocation_source: string;
  context_snapshot: Record<string, unknown> | null;
}

/** An agent as the run-bound secret routes check its trust. */
export interface SecretAgentRow {
  role: string;
  metadata: Record<string, unknown> | null;
}

export interface NewSecretRow {
  id: string;
  companyId: string;
  name: string;
  provider: string;
  externalRef: string | null;
  description: string | null;
  createdByAgentId: string | null;
  createdByUserId: string | null;
}

/**
 * The only place company_secrets, company_secret_versions and secret_access_events are read and
 * written. Version rows (ciphertext) leave here only towards SecretsService.resolveValue.
 */
@Injectable()
export class SecretsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  private get secrets() {
    return this.db.repo(SecretEntity);
  }

  private get versions() {
    return this.db.repo(SecretVersionEntity);
  }

  list(companyId: string): Promise<SecretEntity[]> {
    return this.secrets.find({ where: { companyId: this.scope(companyId) }, order: { createdAt: 'DESC', id: 'DESC' } });
  }

  /** Inserts the secret row unless the company already has one of that name; returns whether it did. */
  async insertUnlessNameTaken(s: NewSecretRow): Promise<boolean> {
    // ON CONFLICT keeps the surrounding transaction usable (no aborted statement)
    const inserted = await this.db.query(
      `INSERT INTO company_secrets (id, company_id, name, provider, external_ref, latest_version, description, created_by_agent_id, created_by_user_id)
         VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8) ON CONFLICT (company_id, name) DO NOTHING RETURNING id`,
      [s.id, this.scope(s.companyId), s.name, s.provider, s.externalRef, s.description, s.createdByAgentId, s.createdByUserId],
    );
    return inserted.length > 0;
  }

  async insertVersion(version: Omit<SecretVersionEntity, 'createdAt'>): Promise<void> {
    await this.versions.insert(version);
  }

  async nameTaken(companyId: string, name: string): Promise<boolean> {
    const taken = await this.rows(companyId, 'SELECT 1 FROM company_secrets WHERE company_id = $1 AND name = $2', [name]);
    return taken.length > 0;
  }

  /** Writes the loaded secret's changed fields back (unique name violations surface as the driver error). */
  async save(secret: SecretEntity): Promise<void> {
    await this.secrets.save(secret);
  }

  async delete(secretId: string): Promise<void> {
    await this.db.query('DELETE FROM company_secrets WHERE id = $1', [secretId]);
  }

  /** By id in any company (board routes check access after); `lock` takes FOR UPDATE. */
  findById(secretId: string, lock: boolean): Promise<SecretEntity | null> {
    return this.secrets.findOne({ where: { id: secretId }, ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}) });
  }

  findByIdOrFail(secretId: string): Promise<SecretEntity> {
    return this.secrets.findOneByOrFail({ id: secretId });
  }

  findInCompany(companyId: string, secretId: string): Promise<SecretEntity | null> {
    return this.secrets.findOneBy({ id: secretId, companyId: this.scope(companyId) });
  }

  /** Secrets of one company among `ids` (valid UUIDs, at least one). */
  findManyInCompany(companyId: string, ids: string[]): Promise<SecretEntity[]> {
    return this.secrets
      .createQueryBuilder('s')
      .where('s.company_id = :companyId AND s.id IN (:...ids)', { companyId: this.scope(companyId), ids })
      .getMany();
  }

  /** One stored version (ciphertext or external reference) of a secret. */
  findVersion(secretId: string, version: number): Promise<SecretVersionEntity | null> {
    return this.versions.findOneBy({ secretId, version });
  }

  /** The security audit row of a run-bound value read (never the value). */
  async insertAccessEvent(event: Omit<SecretAccessEventEntity, 'id' | 'createdAt'>): Promise<void> {
    await this.db.repo(SecretAccessEventEntity).insert(event);
  }

  /** The run a run-bound secret request names, if it is this agent's in this company. */
  async findAgentRun(companyId: string, agentId: string, runId: string | undefined): Promise<SecretRunRow | null> {
    // reads heartbeat_runs (owned by heartbeat; the heartbeat module imports this one)
    const [run] = await this.db.query<SecretRunRow>(
      `SELECT status, invocation_source, context_snapshot FROM heartbeat_runs WHERE id = $1 AND agent_id = $2 AND company_id = $3`,
      [runId, agentId, this.scope(companyId)],
    );
    return run ?? null;
  }

  async findAgentTrust(agentId: string): Promise<SecretAgentRow | null> {
    // reads agents (owned by agents; the agents module imports this one)
    const [agent] = await this.db.query<SecretAgentRow>('SELECT role, metadata FROM agents WHERE id = $1', [agentId]);
    return agent ?? null;
  }

  /** The agent's adapter configuration (its env bindings), or null when the company has no such agent. */
  async findAgentAdapterConfig(companyId: string, agentId: string): Promise<{ adapter_config: { env?: unknown } | null } | null> {
    // reads agents (owned by agents; the agents module imports this one)
    const [agent] = await this.db.query<{ adapter_config: { env?: unknown } | null }>(
      'SELECT adapter_config FROM agents WHERE id = $1 AND company_id = $2',
      [agentId, this.scope(companyId)],
    );
    return agent ?? null;
  }

  /** The project's env map (undefined when the company has no such project). */
  async findProjectEnv(companyId: string, projectId: string): Promise<unknown> {
    // reads projects (owned by projects; the projects module imports this one)
    const [project] = await this.db.query<{ env: unknown }>('SELECT env FROM projects WHERE id = $1 AND company_id = $2', [
      projectId,
      this.scope(companyId),
    ]);
    return project?.env;
  }

  /**
   * Instance-wide (start-up check, across companies): local encrypted versions stored under a master
   * key other than `fingerprint`, per key.
   */
  foreignKeyVersions(fingerprint: string): Promise<Array<{ fingerprint: string; versions: number; companies: number }>> {
    return this.db.query(
      `SELECT key_fingerprint AS fingerprint, count(*)::int AS versions, count(DISTINCT company_id)::int AS companies
         FROM company_secret_versions WHERE key_fingerprint IS NOT NULL AND key_fingerprint <> $1
        GROUP BY key_fingerprint ORDER BY key_fingerprint`,
      [fingerprint],
    );
  }
}
