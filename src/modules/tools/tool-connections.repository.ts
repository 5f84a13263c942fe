import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import type { CatalogEntry, CredentialRef, ToolApplication, ToolConnection, TransportConfig, Transport } from './tool.types';

const APPLICATION = `a.id, a.company_id AS "companyId", a.application_key AS "applicationKey", a.name, a.description, a.type, a.status,
  a.metadata, a.archived_at AS "archivedAt", a.created_at AS "createdAt", a.updated_at AS "updatedAt"`;

const CONNECTION = `c.id, c.company_id AS "companyId", c.application_id AS "applicationId", a.name AS "applicationName", c.name,
  c.tool_prefix AS "toolPrefix", c.transport, c.auth_kind AS "authKind", c.status, c.transport_config AS "transportConfig",
  c.credential_refs AS "credentialRefs", c.gallery_key AS "galleryKey", c.approval_timeout_sec AS "approvalTimeoutSec",
  c.health_status AS "healthStatus", c.health_message AS "healthMessage", c.health_checked_at AS "healthCheckedAt",
  c.last_catalog_refresh_at AS "lastCatalogRefreshAt", c.last_used_at AS "lastUsedAt", c.created_by_agent_id AS "createdByAgentId",
  c.created_by_user_id AS "createdByUserId", c.archived_at AS "archivedAt", c.created_at AS "createdAt", c.updated_at AS "updatedAt",
  (SELECT count(*)::int FROM tool_catalog_entries e WHERE e.company_id = c.company_id AND e.connection_id = c.id AND e.status = 'active') AS "toolCount"`;

const FROM_CONNECTIONS = `FROM tool_connections c JOIN tool_applications a ON a.company_id = c.company_id AND a.id = c.application_id`;

const CATALOG = `e.id, e.company_id AS "companyId", e.connection_id AS "connectionId", c.application_id AS "applicationId",
  e.tool_name AS "toolName", e.title, e.description, e.input_schema AS "inputSchema", e.annotations, e.status,
  e.created_at AS "createdAt", e.updated_at AS "updatedAt"`;

export interface NewConnection {
  applicationId: string;
  name: string;
  toolPrefix: string;
  transport: Transport;
  authKind: string;
  status: 'active' | 'disabled';
  transportConfig: TransportConfig;
  credentialRefs: CredentialRef[];
  galleryKey: string | null;
  approvalTimeoutSec: number;
  createdByAgentId: string | null;
  createdByUserId: string | null;
}

export type ConnectionChanges = Partial<Omit<NewConnection, 'applicationId' | 'createdByAgentId' | 'createdByUserId' | 'galleryKey'>>;

const CHANGE_COLUMNS: Record<keyof ConnectionChanges, string> = {
  name: 'name',
  toolPrefix: 'tool_prefix',
  transport: 'transport',
  authKind: 'auth_kind',
  status: 'status',
  transportConfig: 'transport_config',
  credentialRefs: 'credential_refs',
  approvalTimeoutSec: 'approval_timeout_sec',
};

export interface RemoteTool {
  name: string;
  title?: string | null;
  description?: string | null;
  inputSchema?: Record<string, unknown> | null;
  annotations?: Record<string, unknown> | null;
}

/** Applications, connections and their catalogs (tool_applications, tool_connections, tool_catalog_entries). */
@Injectable()
export class ToolConnectionsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  listApplications(companyId: string): Promise<ToolApplication[]> {
    return this.rows(
      companyId,
      `SELECT ${APPLICATION} FROM tool_applications a WHERE a.company_id = $1 AND a.archived_at IS NULL ORDER BY a.created_at, a.id`,
    );
  }

  findApplication(companyId: string, id: string): Promise<ToolApplication | null> {
    return this.row(companyId, `SELECT ${APPLICATION} FROM tool_applications a WHERE a.company_id = $1 AND a.id = $2`, [id]);
  }

  /** The application of this key, made when missing (a connection's own group). */
  async ensureApplication(companyId: string, key: string, name: string, type: string): Promise<ToolApplication> {
    const rows = await this.rows<ToolApplication>(
      companyId,
      `INSERT INTO tool_applications AS a (company_id, application_key, name, type) VALUES ($1, $2, $3, $4)
       ON CONFLICT (company_id, application_key) DO UPDATE SET updated_at = a.updated_at
       RETURNING ${APPLICATION}`,
      [key, name, type],
    );
    return rows[0];
  }

  listConnections(companyId: string, opts: { includeArchived?: boolean } = {}): Promise<ToolConnection[]> {
    return this.rows(
      companyId,
      `SELECT ${CONNECTION} ${FROM_CONNECTIONS} WHERE c.company_id = $1 ${opts.includeArchived ? '' : 'AND c.archived_at IS NULL'}
       ORDER BY c.created_at, c.id`,
    );
  }

  findConnection(companyId: string, id: string, lock = false): Promise<ToolConnection | null> {
    return this.row(
      companyId,
      `SELECT ${CONNECTION} ${FROM_CONNECTIONS} WHERE c.company_id = $1 AND c.id = $2 ${lock ? 'FOR UPDATE OF c' : ''}`,
      [id],
    );
  }

  /** Whether an active connection of the company uses this tool prefix (other than `exceptId`). */
  async prefixTaken(companyId: string, prefix: string, exceptId: string | null = null): Promise<boolean> {
    const row = await this.row(
      companyId,
      `SELECT 1 FROM tool_connections WHERE company_id = $1 AND tool_prefix = $2 AND archived_at IS NULL AND id IS DISTINCT FROM $3::uuid`,
      [prefix, exceptId],
    );
    return row !== null;
  }

  async insertConnection(companyId: string, c: NewConnection): Promise<ToolConnection> {
    const [{ id }] = await this.rows<{ id: string }>(
      companyId,
      `INSERT INTO tool_connections (company_id, application_id, name, tool_prefix, transport, auth_kind, status, transport_config,
         credential_refs, gallery_key, approval_timeout_sec, created_by_agent_id, created_by_user_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id`,
      [
        c.applicationId,
        c.name,
        c.toolPrefix,
        c.transport,
        c.authKind,
        c.status,
        JSON.stringify(c.transportConfig),
        JSON.stringify(c.credentialRefs),
        c.galleryKey,
        c.approvalTimeoutSec,
        c.createdByAgentId,
        c.createdByUserId,
      ],
    );
    return (await this.findConnection(companyId, id))!;
  }

  async updateConnection(companyId: string, id: string, changes: ConnectionChanges): Promise<ToolConnection> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    for (const [k, v] of Object.entries(changes) as Array<[keyof ConnectionChanges, unknown]>) {
      if (v === undefined) continue;
      params.push(typeof v === 'object' && v !== null ? JSON.stringify(v) : v);
      sets.push(`${CHANGE_COLUMNS[k]} = $${params.length + 1}`);
    }
    if (sets.length)
      await this.rows(
        companyId,
        `UPDATE tool_connections SET ${sets.join(', ')}, updated_at = now() WHERE company_id = $1 AND id = $2`,
        params,
      );
    return (await this.findConnection(companyId, id))!;
  }

  async archiveConnection(companyId: string, id: string): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE tool_connections SET status = 'archived', archived_at = now(), updated_at = now() WHERE company_id = $1 AND id = $2`,
      [id],
    );
  }

  async recordHealth(companyId: string, id: string, status: string, message: string | null, refreshed: boolean): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE tool_connections SET health_status = $3, health_message = $4, health_checked_at = now(),
         last_catalog_refresh_at = CASE WHEN $5 THEN now() ELSE last_catalog_refresh_at END
       WHERE company_id = $1 AND id = $2`,
      [id, status, message, refreshed],
    );
  }

  /** The connection was used (a gateway call); outside the caller's transaction. */
  async touch(companyId: string, id: string): Promise<void> {
    await this.rows(companyId, `UPDATE tool_connections SET last_used_at = now() WHERE company_id = $1 AND id = $2`, [id], {
      detached: true,
    });
  }

  /** The catalog becomes what the server listed: new tools added, changed ones updated, missing ones marked removed. */
  async replaceCatalog(companyId: string, connectionId: string, tools: RemoteTool[]): Promise<void> {
    await this.rows(
      companyId,
      `WITH listed AS (
         SELECT * FROM jsonb_to_recordset($3::jsonb) AS t(name text, title text, description text, "inputSchema" jsonb, annotations jsonb)
       ), upserted AS (
         INSERT INTO tool_catalog_entries (company_id, connection_id, tool_name, title, description, input_schema, annotations, status)
         SELECT $1, $2, name, title, description, "inputSchema", annotations, 'active' FROM listed
         ON CONFLICT (connection_id, tool_name) DO UPDATE SET title = EXCLUDED.title, description = EXCLUDED.description,
           input_schema = EXCLUDED.input_schema, annotations = EXCLUDED.annotations, status = 'active', updated_at = now()
         RETURNING tool_name
       )
       UPDATE tool_catalog_entries SET status = 'removed', updated_at = now()
        WHERE company_id = $1 AND connection_id = $2 AND status = 'active' AND tool_name NOT IN (SELECT name FROM listed)`,
      [connectionId, JSON.stringify(tools)],
    );
  }

  listCatalog(companyId: string, connectionId: string): Promise<CatalogEntry[]> {
    return this.rows(
      companyId,
      `SELECT ${CATALOG} FROM tool_catalog_entries e JOIN tool_connections c ON c.company_id = e.company_id AND c.id = e.connection_id
        WHERE e.company_id = $1 AND e.connection_id = $2 ORDER BY e.tool_name`,
      [connectionId],
    );
  }

  findCatalogEntry(companyId: string, id: string): Promise<CatalogEntry | null> {
    return this.row(
      companyId,
      `SELECT ${CATALOG} FROM tool_catalog_entries e JOIN tool_connections c ON c.company_id = e.company_id AND c.id = e.connection_id
        WHERE e.company_id = $1 AND e.id = $2`,
      [id],
    );
  }

  /** Every listed tool of the company's active remote connections (the gateway's menu before policies). */
  activeRemoteTools(companyId: string): Promise<Array<CatalogEntry & { toolPrefix: string }>> {
    return this.rows(
      companyId,
      `SELECT ${CATALOG}, c.tool_prefix AS "toolPrefix" FROM tool_catalog_entries e
         JOIN tool_connections c ON c.company_id = e.company_id AND c.id = e.connection_id
        WHERE e.company_id = $1 AND e.status = 'active' AND c.status = 'active' AND c.transport = 'mcp_remote'
        ORDER BY c.tool_prefix, e.tool_name`,
    );
  }

  /** The company's active local connections (written into each run's CLI configuration). */
  activeLocalConnections(companyId: string): Promise<ToolConnection[]> {
    return this.rows(
      companyId,
      `SELECT ${CONNECTION} ${FROM_CONNECTIONS} WHERE c.company_id = $1 AND c.status = 'active' AND c.transport = 'local_stdio' ORDER BY c.tool_prefix`,
    );
  }
}
