import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { forbidden, notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { AppConfig } from '../../config/app-config';
import { iso, isoRequired } from '../../database/row-mapping';
import type { SecretResponseDto } from './dto/secret.dto';
import { ApproveSecretProposalDto, CreateSecretProposalDto, RejectSecretProposalDto, SecretProposalDto } from './dto/secret-proposal.dto';
import { decryptValue, encryptValue } from './secret-crypto';
import { SecretProposalRecord, SecretProposalsRepository } from './secret-proposals.repository';
import { secretError } from './secrets.errors';
import { SecretsService } from './secrets.service';

const aad = (id: string) => `secret-proposal:${id}`;

export function toProposal(p: SecretProposalRecord): SecretProposalDto {
  return {
    id: p.id,
    companyId: p.companyId,
    kind: 'secret',
    status: p.status,
    proposedName: p.name,
    proposedDescription: p.description,
    reason: p.reason,
    justification: p.reason,
    proposedBy: p.proposedByAgentId
      ? { type: 'agent', id: p.proposedByAgentId, name: p.agentName }
      : { type: 'user', id: p.proposedByUserId ?? 'unknown', name: null },
    proposedByAgentId: p.proposedByAgentId,
    runId: p.runId,
    issueId: p.issueId,
    hasValue: p.hasValue,
    valueFingerprintSha256: null,
    valueLength: null,
    secretId: p.secretId,
    decidedByUserId: p.decidedByUserId,
    decisionNote: p.decisionNote,
    decidedAt: iso(p.decidedAt),
    target: null,
    envKeys: [],
    createdAt: isoRequired(p.createdAt),
    updatedAt: isoRequired(p.updatedAt),
  };
}

/**
 * Secret proposals: an agent (or a board user) asks for a company secret by name and says why;
 * the board fills in the value (or takes the one the proposer supplied, held encrypted) and
 * approves it into a company secret, or rejects it. The value is never returned and is wiped from
 * the proposal once it is decided.
 */
@Injectable()
export class SecretProposalsService {
  constructor(
    private readonly repo: SecretProposalsRepository,
    private readonly secrets: SecretsService,
    private readonly config: AppConfig,
    private readonly activity: ActivityRecorder,
  ) {}

  async propose(actor: Actor, companyId: string, dto: CreateSecretProposalDto): Promise<SecretProposalDto> {
    const id = randomUUID();
    const value = dto.value
      ? (() => {
          const enc = encryptValue(this.config.secretsMasterKey, dto.value, aad(id));
          return {
            ciphertext: enc.ciphertext,
            iv: enc.iv,
            authTag: enc.authTag,
            keyFingerprint: this.config.secretsMasterKeyFingerprint,
          };
        })()
      : null;
    const inserted = await this.repo.insert(companyId, {
      id,
      name: dto.name,
      description: dto.description ?? null,
      reason: dto.reason ?? null,
      agentId: actor.kind === 'agent' ? actor.agentId : null,
      userId: actor.kind === 'board' ? actor.userId : null,
      runId: actor.kind === 'agent' ? (actor.runId ?? null) : null,
      issueId: dto.issueId ?? null,
      value,
    });
    if (!inserted) throw secretError('secret_proposal_pending', `A proposal for "${dto.name}" is pending already`, { name: dto.name });
    return this.get(companyId, id);
  }

  /** Newest first; `all` for every status. Agents see only their own proposals. */
  async list(actor: Actor, companyId: string, status: string): Promise<SecretProposalDto[]> {
    const rows = await this.repo.list(companyId, status === 'all' ? null : status);
    return rows.filter((r) => actor.kind === 'board' || r.proposedByAgentId === actor.agentId).map(toProposal);
  }

  /** Creates the company secret from the value given (or held) and marks the proposal approved, in one transaction. */
  async approve(
    actor: Actor,
    companyId: string,
    id: string,
    dto: ApproveSecretProposalDto,
  ): Promise<SecretProposalDto & { secret: SecretResponseDto }> {
    const p = await this.pending(actor, companyId, id);
    const held = p.value
      ? decryptValue(this.config.secretsMasterKey, { ciphertext: p.value.ciphertext, iv: p.value.iv, authTag: p.value.authTag }, aad(id))
      : null;
    const value = dto.value ?? held;
    if (!value) {
      throw secretError('secret_proposal_value_required', 'The proposer supplied no value: fill it in with `value`', { field: 'value' });
    }
    const row = (await this.repo.find(companyId, id))!;
    const name = dto.overrides?.name ?? row.name;
    const secret = await this.secrets.create(actor, companyId, {
      name,
      value,
      description: dto.overrides?.description !== undefined ? dto.overrides.description : row.description,
      provider: dto.overrides?.providerConfigId ?? undefined,
    });
    await this.activity.record({
      companyId,
      action: 'secret.created',
      entityType: 'secret',
      entityId: secret.id,
      actor,
      details: { name: secret.name, provider: secret.provider, latestVersion: secret.latestVersion, fromProposal: id },
    });
    await this.repo.decide(companyId, id, {
      status: 'approved',
      secretId: secret.id,
      userId: (actor as { userId: string }).userId,
      note: dto.note ?? null,
      name,
    });
    return { ...(await this.get(companyId, id)), secret };
  }

  async reject(actor: Actor, companyId: string, id: string, dto: RejectSecretProposalDto): Promise<SecretProposalDto> {
    await this.pending(actor, companyId, id);
    await this.repo.decide(companyId, id, {
      status: 'rejected',
      secretId: null,
      userId: (actor as { userId: string }).userId,
      note: dto.reason ?? null,
    });
    return this.get(companyId, id);
  }

  private async get(companyId: string, id: string): Promise<SecretProposalDto> {
    const row = await this.repo.find(companyId, id);
    if (!row) throw notFound('Secret proposal');
    return toProposal(row);
  }

  /** The pending proposal, locked (board only); a decided one: 409. */
  private async pending(actor: Actor, companyId: string, id: string) {
    if (actor.kind !== 'board') throw forbidden('Board access required');
    const p = isUuid(id) ? await this.repo.lockValue(companyId, id) : null;
    if (!p) throw notFound('Secret proposal');
    if (p.status !== 'pending') throw secretError('secret_proposal_decided', `The proposal is ${p.status} already`, { status: p.status });
    return p;
  }
}
