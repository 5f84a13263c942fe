import { isoRequired } from '../../database/row-mapping';
import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import { decodeCursor, keysetPage } from '../../common/http/keyset-cursor';
import { ActivityQueryDto, ActivityResponseDto, AgentActionsPageDto, AgentActionsQueryDto, CreateActivityDto } from './dto/activity.dto';
import { ActivityEntity } from '../../common/activity/activity.entity';
import { ActivityRepository, toActivityEntity } from './activity.repository';

export function toActivityResponse(a: ActivityEntity): ActivityResponseDto {
  return {
    id: a.id,
    companyId: a.companyId,
    actorType: a.actorType,
    actorId: a.actorId,
    action: a.action,
    entityType: a.entityType,
    entityId: a.entityId,
    agentId: a.agentId,
    runId: a.runId,
    details: a.details,
    createdAt: isoRequired(a.createdAt),
  };
}

@Injectable()
export class ActivityService {
  constructor(
    private readonly recorder: ActivityRecorder,
    private readonly repo: ActivityRepository,
  ) {}

  /** Newest first, exact-match filters, no pagination (spec). */
  async listForCompany(companyId: string, q: ActivityQueryDto): Promise<ActivityResponseDto[]> {
    const rows = await this.repo.listForCompany(companyId, { agentId: q.agentId, entityType: q.entityType, entityId: q.entityId });
    return rows.map(toActivityResponse);
  }

  /** The agent-action audit: activity whose actor is an agent, newest first, keyset pages; hidden issues left out as in the feed. */
  async agentActions(companyId: string, q: AgentActionsQueryDto): Promise<AgentActionsPageDto> {
    const limit = q.limit ?? 50;
    const rows = await this.repo.agentActions(companyId, {
      after: q.cursor ? decodeCursor(q.cursor) : undefined,
      limit,
      allActors: q.actorScope === 'all',
      action: q.action,
      entityType: q.entityType,
      entityId: q.entityId,
      agentId: q.agentId,
      runId: q.runId,
      responsibleUserId: q.responsibleUserId,
      from: q.from,
      to: q.to,
    });
    const page = keysetPage(rows, limit);
    return {
      items: page.rows.map((r) => ({
        ...toActivityResponse(toActivityEntity(r)),
        entity: { issue: r.issue, comment: null, document: null },
      })),
      nextCursor: page.nextCursor,
      accessTier: 'full',
    };
  }

  async listForEntity(companyId: string, entityType: string, entityId: string): Promise<ActivityResponseDto[]> {
    const rows = await this.repo.findForEntity(companyId, entityType, entityId);
    return rows.map(toActivityResponse);
  }

  async create(companyId: string, dto: CreateActivityDto): Promise<ActivityResponseDto> {
    const row = await this.recorder.recordNow({
      companyId,
      actorType: dto.actorType ?? 'system',
      actorId: dto.actorId,
      action: dto.action,
      entityType: dto.entityType,
      entityId: dto.entityId,
      agentId: dto.agentId ?? null,
      runId: null,
      details: dto.details ?? null,
    });
    return toActivityResponse(row);
  }
}
