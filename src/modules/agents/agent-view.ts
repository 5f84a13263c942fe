import { AgentEntity } from './agent.entity';
import { AgentKeyResponseDto, AgentResponseDto, ChainLinkDto } from './dto/agent.dto';
import { AgentApiKeyEntity } from './agent-api-key.entity';

/** The agent record; `redacted` hides configuration from callers that cannot read it. */
export function toAgentResponse(a: AgentEntity, redacted = false): AgentResponseDto {
  return {
    id: a.id,
    companyId: a.companyId,
    name: a.name,
    urlKey: a.urlKey,
    role: a.role,
    title: a.title,
    capabilities: a.capabilities,
    reportsTo: a.reportsTo,
    adapterType: a.adapterType,
    adapterConfig: redacted ? {} : a.adapterConfig,
    runtimeConfig: redacted ? {} : a.runtimeConfig,
    configRedacted: redacted,
    budgetMonthlyCents: a.budgetMonthlyCents,
    spentMonthlyCents: a.spentMonthlyCents,
    status: a.status,
    pauseReason: a.pauseReason,
    permissions: a.permissions,
    metadata: a.metadata,
    sourceIssueIds: a.sourceIssueIds ?? [],
    terminatedAt: a.terminatedAt ? a.terminatedAt.toISOString() : null,
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  };
}

export const toChainLink = (a: AgentEntity): ChainLinkDto => ({ id: a.id, name: a.name, urlKey: a.urlKey, role: a.role, title: a.title });

export function toKeyResponse(k: AgentApiKeyEntity): AgentKeyResponseDto {
  return {
    id: k.id,
    agentId: k.agentId,
    companyId: k.companyId,
    name: k.name,
    tokenPrefix: k.tokenPrefix,
    revoked: k.revokedAt !== null,
    revokedAt: k.revokedAt ? k.revokedAt.toISOString() : null,
    lastUsedAt: k.lastUsedAt ? k.lastUsedAt.toISOString() : null,
    createdAt: k.createdAt.toISOString(),
  };
}
