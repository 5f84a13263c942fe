import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import { generateToken, safeEqual, sha256Hex, tokenDisplayPrefix } from '../../common/auth/tokens';
import { conflict, DomainError, notFound, unauthorized, unprocessable } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { AgentApiKeyEntity } from '../agents/agent-api-key.entity';
import { AgentEntity } from '../agents/agent.entity';
import { AccessPermissions } from './access-permissions.service';
import { AcceptInviteDto } from './dto/invite.dto';
import { AcceptedJoinRequestDto, ClaimedApiKeyDto, JoinRequestResponseDto } from './dto/join-request.dto';
import { InvitesService } from './invites.service';
import { MemberResponse, MembershipsService } from './memberships.service';
import type { MembershipRole } from './permission-keys';
import { slugify } from '../users/slug';

interface JoinRequestRow {
  id: string;
  company_id: string;
  invite_id: string | null;
  request_type: 'human' | 'agent';
  status: 'pending_approval' | 'approved' | 'rejected';
  requesting_user_id: string | null;
  agent_name: string | null;
  adapter_type: string | null;
  capabilities: string | null;
  claim_secret_hash: string | null;
  api_key_claimed_at: Date | null;
  created_agent_id: string | null;
  decided_by_user_id: string | null;
  decided_at: Date | null;
  decision_note: string | null;
  created_at: Date;
  updated_at: Date;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

function toJoinRequestResponse(r: JoinRequestRow): JoinRequestResponseDto {
  return {
    id: r.id,
    companyId: r.company_id,
    inviteId: r.invite_id,
    requestType: r.request_type,
    status: r.status,
    requestingUserId: r.requesting_user_id,
    agentName: r.agent_name,
    adapterType: r.adapter_type,
    capabilities: r.capabilities,
    createdAgentId: r.created_agent_id,
    decidedByUserId: r.decided_by_user_id,
    decidedAt: iso(r.decided_at),
    decisionNote: r.decision_note,
    apiKeyClaimedAt: iso(r.api_key_claimed_at),
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
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
    private readonly db: Db,
    private readonly invites: InvitesService,
    private readonly memberships: MembershipsService,
    private readonly permissions: AccessPermissions,
    private readonly activity: ActivityRecorder,
  ) {}

  async accept(actor: Actor | undefined, token: string, dto: AcceptInviteDto): Promise<AcceptedJoinRequestDto | MemberResponse> {
    const invite = await this.invites.resolve(token, { lock: true });
    const type = dto.requestType ?? (isSignedInUser(actor) ? 'human' : 'agent');
    if (invite.allowed_join_types !== 'both' && invite.allowed_join_types !== type) {
      throw unprocessable(
        `This invite admits ${invite.allowed_join_types === 'human' ? 'humans' : 'agents'} only`,
        'join_type_not_allowed',
      );
    }
    if (type === 'human') {
      if (!actor) throw unauthorized('Sign in to accept an invite as a human');
      if (!isSignedInUser(actor))
        throw unprocessable('Only a signed-in user can join as a human; the local board already reaches every company', 'user_required');
      const existing = await this.memberships.find(invite.company_id, 'user', actor.userId);
      if (existing?.status === 'active') throw conflict('You are already a member of this company', 'already_member');
      const m = await this.memberships.join(invite.company_id, 'user', actor.userId, invite.role as MembershipRole, actor);
      await this.activity.record({
        companyId: invite.company_id,
        action: 'company_member.joined',
        entityType: 'company_member',
        entityId: m.id,
        actor,
        details: { inviteId: invite.id, membershipRole: invite.role },
      });
      return this.memberships.get(invite.company_id, m.id);
    }
    if (!dto.agentName) {
      throw new DomainError(400, 'validation_failed', 'agentName is required for an agent join request', {
        fields: [{ field: 'agentName', messages: ['agentName is required for an agent join request'] }],
      });
    }
    const claimSecret = generateToken('cs');
    const [row] = await this.db.query<JoinRequestRow>(
      `INSERT INTO join_requests (company_id, invite_id, request_type, agent_name, adapter_type, capabilities, claim_secret_hash)
       VALUES ($1, $2, 'agent', $3, $4, $5, $6) RETURNING *`,
      [invite.company_id, invite.id, dto.agentName.trim(), dto.adapterType ?? null, dto.capabilities ?? null, sha256Hex(claimSecret)],
    );
    await this.activity.record({
      companyId: invite.company_id,
      action: 'join_request.created',
      entityType: 'join_request',
      entityId: row.id,
      actorType: 'system',
      actorId: `invite:${invite.id}`,
      agentId: null,
      runId: null,
      details: { requestType: 'agent', agentName: row.agent_name, inviteId: invite.id },
    });
    return { ...toJoinRequestResponse(row), claimSecret };
  }

  async list(actor: Actor, companyId: string, status?: string, requestType?: string): Promise<JoinRequestResponseDto[]> {
    await this.permissions.assert(actor, companyId, 'joins:approve');
    const wanted = status === 'pending' ? 'pending_approval' : status;
    const rows = await this.db.query<JoinRequestRow>(
      `SELECT * FROM join_requests WHERE company_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR request_type = $3)
        ORDER BY created_at DESC, id`,
      [companyId, wanted ?? null, requestType ?? null],
    );
    return rows.map(toJoinRequestResponse);
  }

  /** Approving an agent request creates the agent (idle, no key yet) and its membership. Only pending requests move. */
  async approve(actor: Actor, companyId: string, requestId: string, note?: string): Promise<JoinRequestResponseDto> {
    await this.permissions.assert(actor, companyId, 'joins:approve');
    const row = await this.decide(actor, companyId, requestId, 'approved', note);
    if (row.request_type === 'agent') {
      const agentId = await this.createAgent(companyId, row);
      await this.memberships.join(companyId, 'agent', agentId, 'member', actor);
      const [updated] = await this.db.query<JoinRequestRow>(
        `WITH changed AS (UPDATE join_requests SET created_agent_id = $2 WHERE id = $1 RETURNING *) SELECT * FROM changed`,
        [row.id, agentId],
      );
      return toJoinRequestResponse(updated);
    }
    if (row.requesting_user_id) {
      const [invite] = await this.db.query<{ role: MembershipRole }>(`SELECT role FROM invites WHERE id = $1`, [row.invite_id]);
      await this.memberships.join(companyId, 'user', row.requesting_user_id, invite?.role ?? 'member', actor);
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
    const [row] = isUuid(requestId)
      ? await this.db.query<JoinRequestRow>(`SELECT * FROM join_requests WHERE id = $1 FOR UPDATE`, [requestId])
      : [];
    if (!row) throw notFound('Join request');
    if (!row.claim_secret_hash || !safeEqual(sha256Hex(claimSecret), row.claim_secret_hash)) {
      throw new DomainError(403, 'invalid_claim_secret', 'Invalid claim secret');
    }
    if (row.status !== 'approved' || !row.created_agent_id) {
      throw conflict(`Join request is ${row.status}; only an approved request yields a key`, 'join_request_not_approved');
    }
    if (row.api_key_claimed_at) throw conflict('The API key of this join request was already claimed', 'api_key_already_claimed');
    const [agent] = await this.db.query<{ status: string }>(`SELECT status FROM agents WHERE id = $1`, [row.created_agent_id]);
    if (!agent || agent.status === 'terminated' || agent.status === 'pending_approval') {
      throw conflict('The agent of this join request cannot receive keys', 'agent_not_keyable');
    }
    await this.db.query(`UPDATE join_requests SET api_key_claimed_at = now(), updated_at = now() WHERE id = $1`, [row.id]);
    const token = generateToken('ak');
    const repo = this.db.repo(AgentApiKeyEntity);
    const key = await repo.save(
      repo.create({
        companyId: row.company_id,
        agentId: row.created_agent_id,
        name: 'join-request',
        tokenHash: sha256Hex(token),
        tokenPrefix: tokenDisplayPrefix(token),
      }),
    );
    await this.activity.record({
      companyId: row.company_id,
      action: 'join_request.api_key_claimed',
      entityType: 'join_request',
      entityId: row.id,
      actorType: 'agent',
      actorId: row.created_agent_id,
      agentId: row.created_agent_id,
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
  ): Promise<JoinRequestRow> {
    const [row] = isUuid(requestId)
      ? await this.db.query<JoinRequestRow>(
          `WITH changed AS (UPDATE join_requests SET status = $3, decided_by_user_id = $4, decided_at = now(), decision_note = $5, updated_at = now()
            WHERE id = $1 AND company_id = $2 AND status = 'pending_approval' RETURNING *) SELECT * FROM changed`,
          [requestId, companyId, status, actor.kind === 'board' ? actor.userId : null, note ?? null],
        )
      : [];
    if (row) return row;
    const [existing] = isUuid(requestId)
      ? await this.db.query<{ status: string }>(`SELECT status FROM join_requests WHERE id = $1 AND company_id = $2`, [
          requestId,
          companyId,
        ])
      : [];
    if (!existing) throw notFound('Join request');
    throw conflict(`Join request is already ${existing.status}`, 'join_request_not_pending', { status: existing.status });
  }

  /** A minimal, valid agent row; the URL key gets a numeric suffix when taken. */
  private async createAgent(companyId: string, req: JoinRequestRow): Promise<string> {
    const name = req.agent_name ?? 'Agent';
    const base = slugify(name, 60, 'agent');
    for (let n = 1; n < 1000; n++) {
      const result = await this.db.manager
        .createQueryBuilder()
        .insert()
        .into(AgentEntity)
        .values({
          companyId,
          name,
          urlKey: n === 1 ? base : `${base}-${n}`,
          role: 'general',
          title: null,
          capabilities: req.capabilities ?? '',
          reportsTo: null,
          adapterType: req.adapter_type ?? 'process',
          adapterConfig: {},
          runtimeConfig: {},
          budgetMonthlyCents: 0,
          spentMonthlyCents: 0,
          status: 'idle',
          permissions: {},
          metadata: { joinRequestId: req.id },
        })
        .orIgnore()
        .returning(['id'])
        .execute();
      const id = (result.raw as Array<{ id: string }>)[0]?.id;
      if (id) return id;
    }
    throw conflict('Could not find a free URL key for the agent', 'url_key_taken');
  }
}
