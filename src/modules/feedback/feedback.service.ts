import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { notFound, unprocessable } from '../../common/errors/domain-error';
import { FeedbackRepository, FeedbackRecord } from './feedback.repository';
import { CreateFeedbackVoteDto, FeedbackTraceDto, FeedbackTraceQueryDto } from './dto/feedback.dto';

const LIST_LIMIT = 500;

export function toFeedbackTrace(r: FeedbackRecord): FeedbackTraceDto {
  return {
    id: r.id,
    companyId: r.companyId,
    targetType: r.targetType,
    targetId: r.targetId,
    vote: r.vote,
    note: r.note,
    status: r.status,
    issueId: r.issueId,
    projectId: r.projectId,
    agentId: r.agentId,
    runId: r.runId,
    voterUserId: r.voterUserId,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
    ...(r.payload !== undefined ? { payload: r.payload ?? { deleted: true } } : {}),
  };
}

/** Board users' votes on agent output (comments, document revisions, runs) and the traces list. */
@Injectable()
export class FeedbackService {
  constructor(private readonly repo: FeedbackRepository) {}

  async vote(actor: Actor, companyId: string, dto: CreateFeedbackVoteDto): Promise<{ trace: FeedbackTraceDto; created: boolean }> {
    if (actor.kind !== 'board') throw new Error('board only');
    const target = await this.repo.target(companyId, dto.targetType, dto.targetId);
    if (!target)
      throw unprocessable(`targetId must reference a ${dto.targetType.replace('_', ' ')} of this company`, 'invalid_reference', {
        field: 'targetId',
      });
    const { id, created } = await this.repo.upsert({
      companyId,
      targetType: dto.targetType,
      targetId: dto.targetId,
      vote: dto.vote,
      note: dto.note?.trim() || null,
      target,
      userId: actor.userId,
    });
    const row = await this.repo.get(companyId, id);
    if (!row) throw notFound('Feedback trace');
    return { trace: toFeedbackTrace(row), created };
  }

  async list(companyId: string, q: FeedbackTraceQueryDto): Promise<FeedbackTraceDto[]> {
    // sharedOnly is the shared status; with a conflicting status filter nothing matches
    if (q.sharedOnly && q.status === 'local') return [];
    const rows = await this.repo.list(companyId, {
      targetType: q.targetType,
      vote: q.vote,
      status: q.sharedOnly ? 'shared' : q.status,
      issueId: q.issueId,
      projectId: q.projectId,
      from: q.from,
      to: q.to,
      includePayload: q.includePayload === true,
      limit: LIST_LIMIT,
    });
    return rows.map(toFeedbackTrace);
  }
}
