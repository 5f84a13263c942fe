import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { boardUserId } from './board-user';
import { MembershipState, ResourceMembershipDto, ResourceMembershipsDto } from './dto/preferences.dto';

type ResourceType = 'project' | 'agent';

const RESOURCE_TABLE: Record<ResourceType, string> = {
  project: `SELECT id FROM projects WHERE company_id = $1`,
  agent: `SELECT id FROM agents WHERE company_id = $1 AND status <> 'terminated'`,
};

/**
 * Per-user sidebar curation: a user joins or leaves projects and agents. No stored row means
 * `joined`; only actual changes are stored and logged (`resource_membership.joined` / `.left`).
 */
@Injectable()
export class ResourceMembershipsService {
  constructor(
    private readonly db: Db,
    private readonly activity: ActivityRecorder,
  ) {}

  async mine(actor: Actor, companyId: string): Promise<ResourceMembershipsDto> {
    const userId = boardUserId(actor);
    const stored = await this.db.query<{ resource_type: ResourceType; resource_id: string; state: MembershipState }>(
      `SELECT resource_type, resource_id, state FROM resource_memberships WHERE company_id = $1 AND user_id = $2`,
      [companyId, userId],
    );
    const [{ updated_at }] = await this.db.query<{ updated_at: Date | null }>(
      `SELECT max(updated_at) AS updated_at FROM resource_memberships WHERE company_id = $1 AND user_id = $2`,
      [companyId, userId],
    );
    const state = (type: ResourceType, id: string) =>
      stored.find((r) => r.resource_type === type && r.resource_id === id)?.state ?? 'joined';
    const map = async (type: ResourceType) => {
      const rows = await this.db.query<{ id: string }>(`${RESOURCE_TABLE[type]} ORDER BY created_at, id`, [companyId]);
      return Object.fromEntries(rows.map((r) => [r.id, state(type, r.id)])) as Record<string, MembershipState>;
    };
    return {
      projectMemberships: await map('project'),
      agentMemberships: await map('agent'),
      updatedAt: updated_at ? new Date(updated_at).toISOString() : null,
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
    const exists = isUuid(resourceId) && (await this.db.query(`${RESOURCE_TABLE[type]} AND id = $2`, [companyId, resourceId])).length > 0;
    if (!exists) throw notFound(type === 'project' ? 'Project' : 'Agent');
    // conditional writes: only a real change returns a row, also under concurrent requests
    const changed =
      target === 'left'
        ? await this.db.query(
            `INSERT INTO resource_memberships AS m (company_id, user_id, resource_type, resource_id, state) VALUES ($1, $2, $3, $4, 'left')
             ON CONFLICT (company_id, user_id, resource_type, resource_id)
             DO UPDATE SET state = 'left', updated_at = now() WHERE m.state <> 'left' RETURNING 1`,
            [companyId, userId, type, resourceId],
          )
        : await this.db.query(
            // (a CTE: a bare UPDATE answers [rows, count] through the driver)
            `WITH changed AS (
               UPDATE resource_memberships SET state = 'joined', updated_at = now()
                WHERE company_id = $1 AND user_id = $2 AND resource_type = $3 AND resource_id = $4 AND state <> 'joined' RETURNING 1)
             SELECT * FROM changed`,
            [companyId, userId, type, resourceId],
          );
    if (changed.length) {
      await this.activity.record({
        companyId,
        action: `resource_membership.${target}`,
        entityType: type,
        entityId: resourceId,
        actor,
        details: { resourceType: type, resourceId, state: target, userId },
      });
    }
    const [row] = await this.db.query<{ state: MembershipState; updated_at: Date }>(
      `SELECT state, updated_at FROM resource_memberships WHERE company_id = $1 AND user_id = $2 AND resource_type = $3 AND resource_id = $4`,
      [companyId, userId, type, resourceId],
    );
    return {
      resourceType: type,
      resourceId,
      state: row?.state ?? 'joined',
      updatedAt: row ? new Date(row.updated_at).toISOString() : null,
    };
  }
}
