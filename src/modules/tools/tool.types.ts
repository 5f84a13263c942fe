/** The records of the tools module (camelCase, as its repositories return them). */

export const TRANSPORTS = ['mcp_remote', 'local_stdio'] as const;
export type Transport = (typeof TRANSPORTS)[number];
export const POLICIES = ['allow', 'ask', 'deny'] as const;
export type ToolPolicy = (typeof POLICIES)[number];
export const SELECTOR_TYPES = ['application', 'connection', 'catalog_entry', 'tool_name'] as const;
export type SelectorType = (typeof SELECTOR_TYPES)[number];

/** A secret that reaches a connection: as a header of the remote server's requests, or as a variable of the local command. */
export interface CredentialRef {
  name: string;
  secretId: string;
  version?: 'latest' | number;
  placement: 'header' | 'env';
  /** the header or variable name */
  key: string;
  /** put before the value, e.g. `Bearer ` */
  prefix?: string | null;
}

/** Remote: `url` and plain (non-secret) `headers`; local: `command`, `args`, plain `env`. */
export interface TransportConfig {
  url?: string;
  headers?: Record<string, string>;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
}

export interface ToolApplication {
  id: string;
  companyId: string;
  applicationKey: string;
  name: string;
  description: string | null;
  type: string;
  status: string;
  metadata: Record<string, unknown>;
  archivedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ToolConnection {
  id: string;
  companyId: string;
  applicationId: string;
  applicationName: string;
  name: string;
  toolPrefix: string;
  transport: Transport;
  authKind: string;
  status: 'active' | 'disabled' | 'archived';
  transportConfig: TransportConfig;
  credentialRefs: CredentialRef[];
  galleryKey: string | null;
  approvalTimeoutSec: number;
  healthStatus: string;
  healthMessage: string | null;
  healthCheckedAt: Date | null;
  lastCatalogRefreshAt: Date | null;
  lastUsedAt: Date | null;
  createdByAgentId: string | null;
  createdByUserId: string | null;
  archivedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  toolCount: number;
}

export interface CatalogEntry {
  id: string;
  companyId: string;
  connectionId: string;
  applicationId: string;
  toolName: string;
  title: string | null;
  description: string | null;
  inputSchema: Record<string, unknown> | null;
  annotations: Record<string, unknown> | null;
  status: 'active' | 'removed';
  createdAt: Date;
  updatedAt: Date;
}

export interface ToolProfile {
  id: string;
  companyId: string;
  profileKey: string;
  name: string;
  description: string | null;
  status: string;
  defaultAction: 'allow' | 'deny';
  metadata: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

export interface ProfileEntry {
  id: string;
  companyId: string;
  profileId: string;
  selectorType: SelectorType;
  policy: ToolPolicy;
  applicationId: string | null;
  connectionId: string | null;
  catalogEntryId: string | null;
  toolName: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ProfileBinding {
  id: string;
  companyId: string;
  profileId: string;
  targetType: 'company' | 'agent';
  targetId: string;
  priority: number;
  createdByAgentId: string | null;
  createdByUserId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** `expired`: pending past its expiry (decided by the database's clock when read). */
export type ActionRequestStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'executed' | 'failed';

export interface ActionRequest {
  id: string;
  companyId: string;
  agentId: string;
  runId: string | null;
  connectionId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  argumentsDigest: string;
  status: ActionRequestStatus;
  decisionReason: string | null;
  decidedByUserId: string | null;
  decidedAt: Date | null;
  expiresAt: Date;
  executedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What the agent's profiles said of a gateway call. */
export const INVOCATION_DECISIONS = ['allow', 'require_approval', 'deny'] as const;
export type InvocationDecision = (typeof INVOCATION_DECISIONS)[number];
/**
 * What became of a gateway call: `awaiting_approval` (an "ask" call waiting for the board, or one
 * that returned "pending" to the agent), `executing` (the remote server is being called), then
 * `succeeded` or `failed`; `denied` (by a profile, or its request was declined) and `timed_out` (its
 * request expired) never reached the remote server.
 */
export const INVOCATION_STATUSES = ['awaiting_approval', 'executing', 'succeeded', 'failed', 'denied', 'timed_out'] as const;
export type InvocationStatus = (typeof INVOCATION_STATUSES)[number];

/** One call of a connection's tool through the gateway (tool_invocations). */
export interface ToolInvocation {
  id: string;
  companyId: string;
  agentId: string;
  runId: string | null;
  connectionId: string;
  connectionName: string;
  toolPrefix: string;
  toolName: string;
  /** the id the agent's runtime gave the call (Claude Code's tool use id), when it sent one */
  toolUseId: string | null;
  decision: InvocationDecision;
  status: InvocationStatus;
  actionRequestId: string | null;
  reasonCode: string | null;
  durationMs: number | null;
  resultBytes: number | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}
