import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import { generateToken, safeEqual, sha256Hex, tokenDisplayPrefix } from '../../common/auth/tokens';
import { DomainError, notFound, unauthorized } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { iso, isoRequired } from '../../database/row-mapping';
import { accessError } from './access.errors';
import { AccessPermissions } from './access-permissions.service';
import { AcceptInviteDto } from './dto/invite.dto';
import { AcceptedJoinRequestDto, ClaimedApiKeyDto, JoinRequestResponseDto } from './dto/join-request.dto';
import { InvitesRepository } from './invites.repository';
import { InvitesService } from './invites.service';
import { JoinRequestRecord, JoinRequestsRepository } from './join-requests.repository';
import { JoinedAgentsRepository } from '../agents/joined-agents.repository';
import { MemberResponse, MembershipsService } from './memberships.service';
import type { MembershipRole } from './permission-keys';
import { slugify } from '../../common/http/slug';

function toJoinRequestResponse(r: JoinRequestRecord): JoinRequestResponseDto {
  return {
    id: r.id,
    companyId: r.companyId,
    inviteId: r.inviteId,
    requestType: r.requestType,
    status: r.status,
    requestingUserId: r.requestingUserId,
    agentName: r.agentName,
    adapterType: r.adapterType,
    capabilities: r.capabilities,
    createdAgentId: r.createdAgentId,
    decidedByUserId: r.decidedByUserId,
    decidedAt: iso(r.decidedAt),
    decisionNote: r.decisionNote,
    apiKeyClaimedAt: iso(r.apiKeyClaimedAt),
    createdAt: isoRequired(r.createdAt),
    updatedAt: isoRequired(r.updatedAt),
  };
}

const isSignedInUser = (actor: Actor | undefined): actor is Extract<Actor, { kind: 'board' }> =>
  actor?.kind === 'board' && actor.source !== 'local_implicit';

/**
 * Accepting an invite: a signed-in human becomes a member at once with the invite's role (the
 * inviter vouched); an agent files a join request that waits for `joins:approve` and receives a
 * claim secret, exchanged once for an API key after approval.
 */
@Injectable()
export class JoinRequestsService {
  constructor(
    private readonly repo: JoinRequestsRepository,
    private readonly inviteRows: InvitesRepository,
    private readonly invites: InvitesService,
    private readonly memberships: MembershipsService,
    private readonly permissions: AccessPermissions,
    private readonly activity: ActivityRecorder,
    private readonly joined: JoinedAgentsRepository,
  ) {}

  async accept(actor: Actor | undefined, token: string, dto: AcceptInviteDto): Promise<AcceptedJoinRequestDto | MemberResponse> {
    const invite = await this.invites.resolve(token, { lock: true });
    const type = dto.requestType ?? (isSignedInUser(actor) ? 'human' : 'agent');
    if (invite.allowedJoinTypes !== 'both' && invite.allowedJoinTypes !== type) {
      throw accessError('join_type_not_allowed', `This invite admits ${invite.allowedJoinTypes === 'human' ? 'humans' : 'agents'} only`);
    }
    if (type === 'human') {
      if (!actor) throw unauthorized('Sign in to accept an invite as a human');
      if (!isSignedInUser(actor))
        throw accessError('user_required', 'Only a signed-in user can join as a human; the local board already reaches every company');
      const existing = await this.memberships.find(invite.companyId, 'user', actor.userId);
      if (existing?.status === 'active') throw accessError('already_member', 'You are already a member of this company');
      const m = await this.memberships.join(invite.companyId, 'user', actor.userId, invite.role as MembershipRole, actor);
      await this.activity.record({
        companyId: invite.companyId,
        action: 'company_member.joined',
        entityType: 'company_member',
        entityId: m.id,
        actor,
        details: { inviteId: invite.id, membershipRole: invite.role },
      });
      return this.memberships.get(invite.companyId, m.id);
    }
    if (!dto.agentName) {
      throw new DomainError(400, 'validation_failed', 'agentName is required for an agent join request', {
        fields: [{ field: 'agentName', messages: ['agentName is required for an agent join request'] }],
      });
    }
    const claimSecret = generateToken('cs');
    const row = await this.repo.insertAgentRequest(invite.companyId, {
      inviteId: invite.id,
      agentName: dto.agentName.trim(),
      adapterType: dto.adapterType ?? null,
      capabilities: dto.capabilities ?? null,
      claimSecretHash: sha256Hex(claimSecret),
    });
    await this.activity.record({
      companyId: invite.companyId,
      action: 'join_request.created',
      entityType: 'join_request',
      entityId: row.id,
      actorType: 'system',
      actorId: `invite:${invite.id}`,
      agentId: null,
      runId: null,
      details: { requestType: 'agent', agentName: row.agentName, inviteId: invite.id },
    });
    return { ...toJoinRequestResponse(row), claimSecret };
  }

  async list(actor: Actor, companyId: string, status?: string, requestType?: string): Promise<JoinRequestResponseDto[]> {
    await this.permissions.assert(actor, companyId, 'joins:approve');
    const wanted = status === 'pending' ? 'pending_approval' : status;
    const rows = await this.repo.list(companyId, wanted ?? null, requestType ?? null);
    return rows.map(toJoinRequestResponse);
  }

  /** Approving an agent request creates the agent (idle, no key yet) and its membership. Only pending requests move. */
  async approve(actor: Actor, companyId: string, requestId: string, note?: string): Promise<JoinRequestResponseDto> {
    await this.permissions.assert(actor, companyId, 'joins:approve');
    const row = await this.decide(actor, companyId, requestId, 'approved', note);
    if (row.requestType === 'agent') {
      const agentId = await this.createAgent(companyId, row);
      await this.memberships.join(companyId, 'agent', agentId, 'member', actor);
      const updated = await this.repo.setCreatedAgent(companyId, row.id, agentId);
      return toJoinRequestResponse(updated);
    }
    if (row.requestingUserId) {
      const role = (await this.inviteRows.roleOf(companyId, row.inviteId)) as MembershipRole | undefined;
      await this.memberships.join(companyId, 'user', row.requestingUserId, role ?? 'member', actor);
    }
    return toJoinRequestResponse(row);
  }

  async reject(actor: Actor, companyId: string, requestId: string, note?: string): Promise<JoinRequestResponseDto> {
    await this.permissions.assert(actor, companyId, 'joins:approve');
    return toJoinRequestResponse(await this.decide(actor, companyId, requestId, 'rejected', note));
  }

  /**
   * The claim secret of an approved agent request yields one agent API key. The secret is compared
   * in constant time; the conditional update makes the claim work exactly once under concurrency.
   */
  async claimApiKey(requestId: string, claimSecret: string): Promise<ClaimedApiKeyDto> {
    const row = isUuid(requestId) ? await this.repo.lockById(requestId) : null;
    if (!row) throw notFound('Join request');
    if (!row.claimSecretHash || !safeEqual(sha256Hex(claimSecret), row.claimSecretHash)) {
      throw accessError('invalid_claim_secret', 'Invalid claim secret');
    }
    if (row.status !== 'approved' || !row.createdAgentId) {
      throw accessError('join_request_not_approved', `Join request is ${row.status}; only an approved request yields a key`);
    }
    if (row.apiKeyClaimedAt) throw accessError('api_key_already_claimed', 'The API key of this join request was already claimed');
    const agentStatus = await this.joined.status(row.companyId, row.createdAgentId);
    if (!agentStatus || agentStatus === 'terminated' || agentStatus === 'pending_approval') {
      throw accessError('agent_not_keyable', 'The agent of this join request cannot receive keys');
    }
    await this.repo.markApiKeyClaimed(row.companyId, row.id);
    const token = generateToken('ak');
    const key = await this.joined.insertApiKey(
      row.companyId,
      row.createdAgentId,
      'join-request',
      sha256Hex(token),
      tokenDisplayPrefix(token),
    );
    await this.activity.record({
      companyId: row.companyId,
      action: 'join_request.api_key_claimed',
      entityType: 'join_request',
      entityId: row.id,
      actorType: 'agent',
      actorId: row.createdAgentId,
      agentId: row.createdAgentId,
      runId: null,
      details: { keyId: key.id },
    });
    return { id: key.id, agentId: key.agentId, companyId: key.companyId, name: key.name, token, createdAt: key.createdAt.toISOString() };
  }

  private async decide(
    actor: Actor,
    companyId: string,
    requestId: string,
    status: 'approved' | 'rejected',
    note?: string,
  ): Promise<JoinRequestRecord> {
    const row = isUuid(requestId)
      ? await this.repo.decidePending(companyId, requestId, status, actor.kind === 'board' ? actor.userId : null, note ?? null)
      : undefined;
    if (row) return row;
    const existing = isUuid(requestId) ? await this.repo.statusOf(companyId, requestId) : undefined;
    if (!existing) throw notFound('Join request');
    throw accessError('join_request_not_pending', `Join request is already ${existing}`, { status: existing });
  }

  /** A minimal, valid agent row; the URL key gets a numeric suffix when taken. */
  private async createAgent(companyId: string, req: JoinRequestRecord): Promise<string> {
    const name = req.agentName ?? 'Agent';
    const base = slugify(name, 60, 'agent');
    for (let n = 1; n < 1000; n++) {
      const id = await this.joined.insertUnlessUrlKeyTaken(companyId, {
        name,
        urlKey: n === 1 ? base : `${base}-${n}`,
        capabilities: req.capabilities ?? '',
        adapterType: req.adapterType ?? 'process',
        joinRequestId: req.id,
      });
      if (id) return id;
    }
    throw accessError('url_key_taken', 'Could not find a free URL key for the agent');
  }
}
