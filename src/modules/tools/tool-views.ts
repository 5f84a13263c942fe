import { iso, isoRequired } from '../../database/row-mapping';
import type { CatalogEntryDto, ToolApplicationDto, ToolConnectionDto } from './dto/tool-connection.dto';
import type { ProfileBindingDto, ProfileEntryDto, ToolProfileDto } from './dto/tool-profile.dto';
import type { ActionRequestDto, ActionRequestItemDto } from './dto/tool-action-request.dto';
import type { ListedActionRequest } from './tool-action-requests.repository';
import { effectOf } from './tool-policy';
import type { ActionRequest, CatalogEntry, ProfileBinding, ProfileEntry, ToolApplication, ToolConnection, ToolProfile } from './tool.types';

/** Response objects of the tools module: every field named, no secret value anywhere (references only). */

export function toConnectionDto(c: ToolConnection): ToolConnectionDto {
  const transportConfig = { ...c.transportConfig };
  return {
    id: c.id,
    companyId: c.companyId,
    applicationId: c.applicationId,
    applicationName: c.applicationName,
    name: c.name,
    toolPrefix: c.toolPrefix,
    uid: c.toolPrefix,
    connectionKind: 'managed',
    connectionPurpose: 'tool',
    ownership: 'customer',
    transport: c.transport,
    authKind: c.authKind,
    credentialSource: 'paperclip_vault',
    externalCredential: null,
    credentialPolicy: 'shared',
    status: c.status,
    enabled: c.status === 'active',
    config: transportConfig,
    transportConfig,
    credentialRefs: c.credentialRefs,
    credentialSecretRefs: [],
    galleryKey: c.galleryKey,
    approvalTimeoutSec: c.approvalTimeoutSec,
    healthStatus: c.healthStatus,
    healthMessage: c.healthMessage,
    healthCheckedAt: iso(c.healthCheckedAt),
    lastHealthAt: iso(c.healthCheckedAt),
    lastCatalogRefreshAt: iso(c.lastCatalogRefreshAt),
    lastError: c.healthStatus === 'error' ? c.healthMessage : null,
    lastUsedAt: iso(c.lastUsedAt),
    toolCount: c.toolCount,
    installs: [],
    createdByAgentId: c.createdByAgentId,
    createdByUserId: c.createdByUserId,
    createdAt: isoRequired(c.createdAt),
    updatedAt: isoRequired(c.updatedAt),
  };
}

export function toApplicationDto(a: ToolApplication): ToolApplicationDto {
  return {
    id: a.id,
    companyId: a.companyId,
    applicationKey: a.applicationKey,
    name: a.name,
    description: a.description,
    type: a.type,
    status: a.status,
    pluginId: null,
    ownerAgentId: null,
    ownerUserId: null,
    metadata: a.metadata ?? {},
    archivedAt: iso(a.archivedAt),
    createdAt: isoRequired(a.createdAt),
    updatedAt: isoRequired(a.updatedAt),
  };
}

export function toCatalogEntryDto(e: CatalogEntry): CatalogEntryDto {
  const annotations = e.annotations ?? {};
  const isReadOnly = annotations.readOnlyHint === true;
  const isDestructive = annotations.destructiveHint === true;
  return {
    id: e.id,
    companyId: e.companyId,
    applicationId: e.applicationId,
    connectionId: e.connectionId,
    entryKind: 'tool',
    name: e.toolName,
    toolName: e.toolName,
    title: e.title,
    description: e.description,
    inputSchema: e.inputSchema,
    outputSchema: null,
    annotations: annotations,
    // from the server's own hints: read-only, destructive, else a write
    riskLevel: isReadOnly ? 'read' : isDestructive ? 'destructive' : 'write',
    isReadOnly,
    isWrite: !isReadOnly,
    isDestructive,
    status: e.status,
    firstSeenAt: isoRequired(e.createdAt),
    lastSeenAt: isoRequired(e.updatedAt),
    createdAt: isoRequired(e.createdAt),
    updatedAt: isoRequired(e.updatedAt),
  };
}

export function toEntryDto(e: ProfileEntry): ProfileEntryDto {
  return {
    id: e.id,
    companyId: e.companyId,
    profileId: e.profileId,
    selectorType: e.selectorType,
    policy: e.policy,
    effect: effectOf(e.policy),
    applicationId: e.applicationId,
    connectionId: e.connectionId,
    catalogEntryId: e.catalogEntryId,
    toolName: e.toolName,
    riskLevel: null,
    conditions: null,
    createdAt: isoRequired(e.createdAt),
    updatedAt: isoRequired(e.updatedAt),
  };
}

export function toBindingDto(b: ProfileBinding): ProfileBindingDto {
  return {
    id: b.id,
    companyId: b.companyId,
    profileId: b.profileId,
    targetType: b.targetType,
    targetId: b.targetId,
    priority: b.priority,
    metadata: {},
    createdByAgentId: b.createdByAgentId,
    createdByUserId: b.createdByUserId,
    createdAt: isoRequired(b.createdAt),
    updatedAt: isoRequired(b.updatedAt),
  };
}

export function toProfileDto(p: ToolProfile, entries: ProfileEntry[], bindings: ProfileBinding[], totalToolCount: number): ToolProfileDto {
  const own = entries.filter((e) => e.profileId === p.id);
  const bound = bindings.filter((b) => b.profileId === p.id);
  return {
    id: p.id,
    companyId: p.companyId,
    profileKey: p.profileKey,
    name: p.name,
    description: p.description,
    status: p.status,
    defaultAction: p.defaultAction,
    newToolsReviewedAt: null,
    newToolsPendingCount: 0,
    metadata: p.metadata ?? {},
    entries: own.map(toEntryDto),
    bindings: bound.map(toBindingDto),
    summary: {
      accessMode: p.defaultAction === 'allow' ? 'all' : 'selected',
      allowedToolCount: own.filter((e) => e.policy !== 'deny' && e.selectorType !== 'connection' && e.selectorType !== 'application')
        .length,
      allowedApplicationCount: new Set(own.filter((e) => e.policy !== 'deny').map((e) => e.applicationId ?? e.connectionId)).size,
      excludedToolCount: own.filter((e) => e.policy === 'deny').length,
      totalToolCount,
      assignmentCount: bound.length,
      appliesToAgentCount: bound.filter((b) => b.targetType === 'agent').length,
      isCompanyDefault: bound.some((b) => b.targetType === 'company'),
    },
    createdAt: isoRequired(p.createdAt),
    updatedAt: isoRequired(p.updatedAt),
  };
}

function preview(r: ActionRequest): string {
  const args = JSON.stringify(r.arguments ?? {}, null, 2);
  return `**${r.toolName}** with:\n\n\`\`\`json\n${args.length > 3000 ? `${args.slice(0, 3000)}…` : args}\n\`\`\``;
}

export function toActionRequestDto(r: ActionRequest): ActionRequestDto {
  return {
    id: r.id,
    companyId: r.companyId,
    agentId: r.agentId,
    runId: r.runId,
    connectionId: r.connectionId,
    toolName: r.toolName,
    arguments: r.arguments,
    status: r.status,
    previewMarkdown: preview(r),
    issueId: null,
    interactionId: null,
    approvalId: null,
    decisionReason: r.decisionReason,
    decidedByUserId: r.decidedByUserId,
    decidedAt: iso(r.decidedAt),
    expiresAt: isoRequired(r.expiresAt),
    executedAt: iso(r.executedAt),
    createdAt: isoRequired(r.createdAt),
    updatedAt: isoRequired(r.updatedAt),
  };
}

export function toActionRequestItem(r: ListedActionRequest): ActionRequestItemDto {
  return {
    request: toActionRequestDto(r),
    connectionId: r.connectionId,
    connectionName: r.connectionName,
    applicationId: r.applicationId,
    applicationName: r.applicationName,
    toolName: r.toolName,
    toolTitle: r.toolTitle,
    agentId: r.agentId,
    runId: r.runId,
  };
}
