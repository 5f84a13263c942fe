import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { notFound } from '../../common/errors/domain-error';
import { generateToken, sha256Hex, tokenDisplayPrefix } from '../../common/auth/tokens';
import { isUuid } from '../../common/http/uuid';
import { ApprovalsService } from '../approvals/approvals.service';
import { AuthorizationService } from '../authorization/authorization.service';
import { AgentKeysRepository } from './agent-keys.repository';
import { AgentLookup } from './agent-lookup.service';
import { toKeyResponse } from './agent-view';
import { AgentEntity } from './agent.entity';
import { agentError } from './agents.errors';
import { AgentKeyResponseDto, CreatedAgentKeyResponseDto } from './dto/agent.dto';

/** Agent API keys: the token is shown once; only its SHA-256 is stored; revocation keeps the record. */
@Injectable()
export class AgentKeysService {
  constructor(
    private readonly keys: AgentKeysRepository,
    private readonly lookup: AgentLookup,
    private readonly authz: AuthorizationService,
    private readonly approvals: ApprovalsService,
  ) {}

  private async agentFor(actor: Actor, routeCompanyId: string | undefined, agentId: string, lock = false): Promise<AgentEntity> {
    const agent = await this.lookup.byId(routeCompanyId, agentId, lock);
    await this.authz.assert({ actor, action: 'agent.keys.manage', companyId: agent.companyId, targetAgentId: agent.id });
    return agent;
  }

  async list(actor: Actor, routeCompanyId: string | undefined, agentId: string): Promise<AgentKeyResponseDto[]> {
    const agent = await this.agentFor(actor, routeCompanyId, agentId);
    const keys = await this.keys.listForAgent(agent.companyId, agent.id);
    return keys.map(toKeyResponse);
  }

  /** Not for pending_approval or terminated agents (409); the agent row lock orders it against terminate. */
  async create(actor: Actor, routeCompanyId: string | undefined, agentId: string, name: string): Promise<CreatedAgentKeyResponseDto> {
    const agent = await this.agentFor(actor, routeCompanyId, agentId, true);
    if (agent.status === 'pending_approval' || agent.status === 'terminated') {
      throw agentError('invalid_agent_status', `API keys cannot be created for a ${agent.status} agent`, { status: agent.status });
    }
    if (await this.approvals.hasPendingHire(agent.id)) throw agentError('hire_approval_pending', 'The agent is waiting for hire approval');
    const token = generateToken('ak');
    const key = await this.keys.insert({
      companyId: agent.companyId,
      agentId: agent.id,
      name: name.trim(),
      tokenHash: sha256Hex(token),
      tokenPrefix: tokenDisplayPrefix(token),
      revokedAt: null,
      lastUsedAt: null,
    });
    return { ...toKeyResponse(key), token };
  }

  /** Marks the key revoked (idempotent); the resolver refuses it from the next request on. */
  async revoke(actor: Actor, routeCompanyId: string | undefined, agentId: string, keyId: string): Promise<AgentKeyResponseDto> {
    const agent = await this.agentFor(actor, routeCompanyId, agentId);
    const key = isUuid(keyId) ? await this.keys.findForAgent(agent.companyId, agent.id, keyId) : null;
    if (!key) throw notFound('API key');
    if (!key.revokedAt) {
      await this.keys.revoke(agent.companyId, key.id);
    }
    return toKeyResponse(await this.keys.getInCompany(agent.companyId, key.id));
  }
}
