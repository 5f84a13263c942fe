import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { iso, isoRequired } from '../../database/row-mapping';
import type { AppsAttentionDto, ConnectionGrantsDto, ConnectionInstallsDto } from './dto/tool-access.dto';
import { ToolActionRequestsRepository } from './tool-action-requests.repository';
import { ToolConnectionsRepository } from './tool-connections.repository';
import { ToolConnectionsService } from './tool-connections.service';
import { ToolProfilesRepository } from './tool-profiles.repository';
import type { ProfileEntry, ToolConnection } from './tool.types';

const FAILED = new Set(['error', 'missing_secret', 'failed', 'degraded']);

/**
 * Who may use a connection and what needs the board, as the board UI's connection and connector
 * pages read them. Access is decided by profiles: a connection's "installs" are the bindings of the
 * profiles that allow it; its one "grant" is the company-wide credential it names.
 */
@Injectable()
export class ToolAccessService {
  constructor(
    private readonly connections: ToolConnectionsService,
    private readonly repo: ToolConnectionsRepository,
    private readonly profiles: ToolProfilesRepository,
    private readonly requests: ToolActionRequestsRepository,
  ) {}

  async installs(actor: Actor, companyId: string | undefined, id: string): Promise<ConnectionInstallsDto> {
    const c = await this.connections.load(companyId, id);
    const profiles = await this.profiles.listProfiles(c.companyId);
    const active = profiles.filter((p) => p.status === 'active');
    const ids = active.map((p) => p.id);
    const [entries, bindings] = ids.length
      ? await Promise.all([this.profiles.entriesOf(c.companyId, ids), this.profiles.bindingsOf(c.companyId, ids)])
      : [[], []];
    const allowing = new Set(
      active
        .filter((p) =>
          this.allows(
            p.defaultAction,
            entries.filter((e) => e.profileId === p.id),
            c,
          ),
        )
        .map((p) => p.id),
    );
    return {
      connectionId: c.id,
      installs: bindings
        .filter((b) => allowing.has(b.profileId))
        .map((b) => ({ targetType: b.targetType, targetId: b.targetId, profileId: b.profileId })),
    };
  }

  async grants(actor: Actor, companyId: string | undefined, id: string): Promise<ConnectionGrantsDto> {
    const c = await this.connections.load(companyId, id);
    return {
      connection: { id: c.id, uid: c.toolPrefix },
      grants: [
        {
          id: c.id,
          companyId: c.companyId,
          connectionId: c.id,
          kind: 'organization',
          subjectUserId: null,
          subjectAgentId: null,
          credentialSecretRefs: [],
          status: c.status === 'archived' ? 'revoked' : 'active',
          isDefault: true,
          lastUsedAt: iso(c.lastUsedAt),
          members: [],
          delegations: [],
          capabilities: { canRevoke: false, canEditAudience: false },
          createdAt: isoRequired(c.createdAt),
          updatedAt: isoRequired(c.updatedAt),
        },
      ],
      // access is edited in profiles, not here
      capabilities: {
        canConfigure: false,
        canCreateOrganizationGrant: false,
        canSetCompanyInstall: false,
        canConnectAsCurrentUser: false,
        canManageAgentInstalls: false,
        canViewOtherPersonalIdentities: false,
        editableAgentIds: [],
      },
      currentUserId: actor.kind === 'board' ? actor.userId : null,
      members: [],
    };
  }

  async attention(companyId: string): Promise<AppsAttentionDto> {
    const [connections, pending] = await Promise.all([this.repo.listConnections(companyId), this.requests.pendingByConnection(companyId)]);
    const waiting = new Map(pending.map((p) => [p.connectionId, p.count]));
    const needs = connections.filter((c) => FAILED.has(c.healthStatus) || (waiting.get(c.id) ?? 0) > 0);
    return {
      generatedAt: new Date().toISOString(),
      apps: needs.map((c) => ({
        connection: {
          id: c.id,
          name: c.name,
          applicationId: c.applicationId,
          healthStatus: c.healthStatus,
          healthMessage: c.healthMessage,
        },
        pendingActionRequestCount: waiting.get(c.id) ?? 0,
        quarantinedCatalogEntryCount: 0,
      })),
      totals: {
        connections: connections.length,
        health: connections.filter((c) => FAILED.has(c.healthStatus)).length,
        quarantinedCatalogEntries: 0,
        pendingActionRequests: pending.reduce((n, p) => n + p.count, 0),
        newToolsPendingReview: 0,
        newToolsPendingProfiles: 0,
      },
    };
  }

  /** Whether a profile lets agents use (some tools of) the connection. */
  private allows(defaultAction: string, entries: ProfileEntry[], c: ToolConnection): boolean {
    const naming = entries.filter(
      (e) =>
        e.connectionId === c.id ||
        (e.selectorType === 'application' && e.applicationId === c.applicationId) ||
        (e.selectorType === 'tool_name' && e.connectionId === null),
    );
    if (naming.some((e) => e.policy !== 'deny')) return true;
    const wholeDenied = naming.some((e) => e.policy === 'deny' && (e.selectorType === 'connection' || e.selectorType === 'application'));
    return defaultAction === 'allow' && !wholeDenied;
  }
}
