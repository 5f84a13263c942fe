import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';
import { SecretAccessEventEntity } from './secret-access-event.entity';
import { SecretEntity, SecretVersionEntity } from './secret.entity';

/** A run as the run-bound secret routes check it. */
export interface SecretRunRecord {
  status: string;
  invocationSource: string;
  contextSnapshot: Record<string, unknown> | null;
}

/** An agent as the run-bound secret routes check its trust. */
export interface SecretAgentRecord {
  role: string;
  metadata: Record<string, unknown> | null;
}

/** A new secret's metadata (its first version is 1; the database stamps the times). */
export type NewSecret = Omit<SecretEntity, 'latestVersion' | 'createdAt' | 'updatedAt'>;

const SECRET = recordColumns(`id, company_id, name, provider, external_ref, latest_version, description, created_by_agent_id,
  created_by_user_id, created_at, updated_at`);
const VERSION = recordColumns(`id, secret_id, company_id, version, provider, external_ref, ciphertext, iv, auth_tag, key_fingerprint,
  value_sha256, created_by_agent_id, created_by_user_id, created_at`);

/**
 * The run, agent and project reads below are of tables of modules that import this one (heartbeat,
 * agents, projects): FOREIGN_READS in src/database/table-owners.ts.
 *
 * The only place company_secrets, company_secret_versions and secret_access_events are read and
 * written. Version rows (ciphertext) leave here only towards SecretsService.resolveValue.
 */
@Injectable()
export class SecretsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  list(companyId: string): Promise<SecretEntity[]> {
    return this.rows<SecretEntity>(
      companyId,
      `SELECT ${SECRET} FROM company_secrets WHERE company_id = $1 ORDER BY created_at DESC, id DESC`,
    );
  }

  /** Inserts the secret row unless the company already has one of that name; returns whether it did. */
  async insertUnlessNameTaken(s: NewSecret): Promise<boolean> {
    // ON CONFLICT keeps the surrounding transaction usable (no aborted statement)
    const inserted = await this.rows(
      s.companyId,
      `INSERT INTO company_secrets (id, company_id, name, provider, external_ref, latest_version, description, created_by_agent_id, created_by_user_id)
         VALUES ($2, $1, $3, $4, $5, 1, $6, $7, $8) ON CONFLICT (company_id, name) DO NOTHING RETURNING id`,
      [s.id, s.name, s.provider, s.externalRef, s.description, s.createdByAgentId, s.createdByUserId],
    );
    return inserted.length > 0;
  }

  async insertVersion(version: Omit<SecretVersionEntity, 'createdAt'>): Promise<void> {
    await this.orm(SecretVersionEntity).insert(version);
  }

  async nameTaken(companyId: string, name: string): Promise<boolean> {
    const taken = await this.rows(companyId, 'SELECT 1 FROM company_secrets WHERE company_id = $1 AND name = $2', [name]);
    return taken.length > 0;
  }

  /** Writes the loaded secret's changed fields back (unique name violations surface as the driver error). */
  async save(secret: SecretEntity): Promise<void> {
    await this.orm(SecretEntity).save(secret);
  }

  async delete(companyId: string, secretId: string): Promise<void> {
    await this.rows(companyId, 'DELETE FROM company_secrets WHERE company_id = $1 AND id = $2', [secretId]);
  }

  async findByIdOrFail(companyId: string, secretId: string): Promise<SecretEntity> {
    const secret = await this.findInCompany(companyId, secretId);
    if (!secret) throw new Error(`secret ${secretId} is not in company ${companyId}`);
    return secret;
  }

  /** The company's secret by id, or null; `lock` takes FOR UPDATE. */
  findInCompany(companyId: string, secretId: string, lock = false): Promise<SecretEntity | null> {
    return this.row<SecretEntity>(
      companyId,
      `SELECT ${SECRET} FROM company_secrets WHERE company_id = $1 AND id = $2 ${lock ? 'FOR UPDATE' : ''}`,
      [secretId],
    );
  }

  /** Secrets of one company among `ids` (valid UUIDs, at least one). */
  findManyInCompany(companyId: string, ids: string[]): Promise<SecretEntity[]> {
    return this.rows<SecretEntity>(companyId, `SELECT ${SECRET} FROM company_secrets WHERE company_id = $1 AND id = ANY($2::uuid[])`, [
      ids,
    ]);
  }

  /** One stored version (ciphertext or external reference) of a secret. */
  findVersion(companyId: string, secretId: string, version: number): Promise<SecretVersionEntity | null> {
    return this.row<SecretVersionEntity>(
      companyId,
      `SELECT ${VERSION} FROM company_secret_versions WHERE company_id = $1 AND secret_id = $2 AND version = $3`,
      [secretId, version],
    );
  }

  /** The security audit row of a run-bound value read (never the value). */
  async insertAccessEvent(event: Omit<SecretAccessEventEntity, 'id' | 'createdAt'>): Promise<void> {
    await this.orm(SecretAccessEventEntity).insert(event);
  }

  /** The run a run-bound secret request names, if it is this agent's in this company. */
  findAgentRun(companyId: string, agentId: string, runId: string | undefined): Promise<SecretRunRecord | null> {
    return this.row<SecretRunRecord>(
      companyId,
      `SELECT status, invocation_source AS "invocationSource", context_snapshot AS "contextSnapshot" FROM heartbeat_runs WHERE company_id = $1 AND id = $2 AND agent_id = $3`,
      [runId, agentId],
    );
  }

  findAgentTrust(companyId: string, agentId: string): Promise<SecretAgentRecord | null> {
    return this.row<SecretAgentRecord>(companyId, 'SELECT role, metadata FROM agents WHERE company_id = $1 AND id = $2', [agentId]);
  }

  /** The agent's adapter configuration (its env bindings), or null when the company has no such agent. */
  findAgentAdapterConfig(companyId: string, agentId: string): Promise<{ adapterConfig: { env?: unknown } | null } | null> {
    return this.row<{ adapterConfig: { env?: unknown } | null }>(
      companyId,
      'SELECT adapter_config AS "adapterConfig" FROM agents WHERE company_id = $1 AND id = $2',
      [agentId],
    );
  }

  /** The project's env map (undefined when the company has no such project). */
  async findProjectEnv(companyId: string, projectId: string): Promise<unknown> {
    const project = await this.row<{ env: unknown }>(companyId, 'SELECT env FROM projects WHERE company_id = $1 AND id = $2', [projectId]);
    return project?.env;
  }

  /**
   * Instance-wide (start-up check, across companies): local encrypted versions stored under a master
   * key other than `fingerprint`, per key.
   */
  foreignKeyVersions(fingerprint: string): Promise<Array<{ fingerprint: string; versions: number; companies: number }>> {
    return this.unscoped(
      'the start-up check of the master key: versions of every company stored under another key',
      `SELECT key_fingerprint AS fingerprint, count(*)::int AS versions, count(DISTINCT company_id)::int AS companies
         FROM company_secret_versions WHERE key_fingerprint IS NOT NULL AND key_fingerprint <> $1
        GROUP BY key_fingerprint ORDER BY key_fingerprint`,
      [fingerprint],
    );
  }
}
