import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { boardUserId } from './board-user';
import { MembershipState, ResourceMembershipDto, ResourceMembershipsDto } from './dto/preferences.dto';
import { PreferencesRepository, ResourceType } from './preferences.repository';

/**
 * Per-user sidebar curation: a user joins or leaves projects and agents. No stored row means
 * `joined`; only actual changes are stored and logged (`resource_membership.joined` / `.left`).
 */
@Injectable()
export class ResourceMembershipsService {
  constructor(
    private readonly repo: PreferencesRepository,
    private readonly activity: ActivityRecorder,
  ) {}

  async mine(actor: Actor, companyId: string): Promise<ResourceMembershipsDto> {
    const userId = boardUserId(actor);
    const stored = await this.repo.storedMemberships(companyId, userId);
    const updatedAt = await this.repo.membershipsUpdatedAt(companyId, userId);
    const state = (type: ResourceType, id: string) => stored.find((r) => r.resourceType === type && r.resourceId === id)?.state ?? 'joined';
    const map = async (type: ResourceType) => {
      const ids = await this.repo.resourceIds(companyId, type);
      return Object.fromEntries(ids.map((id) => [id, state(type, id)])) as Record<string, MembershipState>;
    };
    return {
      projectMemberships: await map('project'),
      agentMemberships: await map('agent'),
      updatedAt,
    };
  }

  /** Same state is a no-op (nothing stored, nothing logged); a resource outside the company is 404. */
  async set(
    actor: Actor,
    companyId: string,
    type: ResourceType,
    resourceId: string,
    target: MembershipState,
  ): Promise<ResourceMembershipDto> {
    const userId = boardUserId(actor);
    const exists = isUuid(resourceId) && (await this.repo.resourceExists(companyId, type, resourceId));
    if (!exists) throw notFound(type === 'project' ? 'Project' : 'Agent');
    // conditional writes: only a real change reports one, also under concurrent requests
    const changed =
      target === 'left'
        ? await this.repo.markLeft(companyId, userId, type, resourceId)
        : await this.repo.markJoined(companyId, userId, type, resourceId);
    if (changed) {
      await this.activity.record({
        companyId,
        action: `resource_membership.${target}`,
        entityType: type,
        entityId: resourceId,
        actor,
        details: { resourceType: type, resourceId, state: target, userId },
      });
    }
    const row = await this.repo.membership(companyId, userId, type, resourceId);
    return {
      resourceType: type,
      resourceId,
      state: row?.state ?? 'joined',
      updatedAt: row?.updatedAt ?? null,
    };
  }
}
