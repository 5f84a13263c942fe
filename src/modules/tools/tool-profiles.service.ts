import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { badRequest, notFound } from '../../common/errors/domain-error';
import { slugify } from '../../common/http/slug';
import { isUuid } from '../../common/http/uuid';
import { RecordCompanyResolvers } from '../../common/references/record-company-resolvers.port';
import type {
  BindToolProfileDto,
  CreateToolProfileDto,
  EffectiveProfilesDto,
  ProfileEntryDto,
  ProfileEntryInputDto,
  ToolProfileDto,
  UnbindToolProfileDto,
  UpdateProfileEntryDto,
  UpdateToolProfileDto,
} from './dto/tool-profile.dto';
import { ToolConnectionsRepository } from './tool-connections.repository';
import { policyFor } from './tool-policy';
import { ToolProfilesRepository, type EntryFields } from './tool-profiles.repository';
import { toBindingDto, toEntryDto, toProfileDto } from './tool-views';
import { toolError } from './tools.errors';
import type { ProfileEntry, ToolPolicy, ToolProfile } from './tool.types';

/** `policy` wins; else the UI's `effect` (exclude = deny); else allow. */
function policyOf(policy: ToolPolicy | undefined, effect: 'include' | 'exclude' | undefined): ToolPolicy {
  if (policy && effect && (policy === 'deny') !== (effect === 'exclude'))
    throw badRequest('policy and effect disagree', { field: 'effect' });
  return policy ?? (effect === 'exclude' ? 'deny' : 'allow');
}

/** Tool profiles: per-tool policies (allow, ask, deny) over the company's connections, bound to the company or to agents. */
@Injectable()
export class ToolProfilesService {
  constructor(
    private readonly repo: ToolProfilesRepository,
    private readonly connections: ToolConnectionsRepository,
    private readonly refs: RecordCompanyResolvers,
  ) {}

  async list(companyId: string): Promise<ToolProfileDto[]> {
    return this.views(companyId, await this.repo.listProfiles(companyId));
  }

  async create(actor: Actor, companyId: string, dto: CreateToolProfileDto): Promise<ToolProfileDto> {
    const profileKey = dto.profileKey ?? slugify(dto.name, 60, 'profile');
    if (await this.repo.keyTaken(companyId, profileKey))
      throw toolError('profile_key_taken', `A profile with the key ${profileKey} exists`);
    const p = await this.repo.insertProfile(companyId, {
      profileKey,
      name: dto.name,
      description: dto.description ?? null,
      status: dto.status ?? 'active',
      defaultAction: dto.defaultAction ?? 'deny',
      metadata: dto.metadata ?? {},
    });
    for (const [i, e] of (dto.entries ?? []).entries())
      await this.repo.insertEntry(companyId, p.id, await this.entryFields(companyId, e, `entries.${i}`));
    return this.view(companyId, p);
  }

  async update(actor: Actor, companyId: string | undefined, id: string, dto: UpdateToolProfileDto): Promise<ToolProfileDto> {
    const p = await this.load(companyId, id);
    if (dto.profileKey && dto.profileKey !== p.profileKey && (await this.repo.keyTaken(p.companyId, dto.profileKey, p.id)))
      throw toolError('profile_key_taken', `A profile with the key ${dto.profileKey} exists`);
    const updated = await this.repo.updateProfile(p.companyId, p.id, {
      profileKey: dto.profileKey,
      name: dto.name,
      description: dto.description,
      status: dto.status,
      defaultAction: dto.defaultAction,
      metadata: dto.metadata === null ? {} : dto.metadata,
    });
    return this.view(p.companyId, updated);
  }

  /** Deleted with its entries and bindings; returns what it was. */
  async remove(actor: Actor, companyId: string | undefined, id: string): Promise<ToolProfileDto> {
    const p = await this.load(companyId, id);
    const view = await this.view(p.companyId, p);
    await this.repo.deleteProfile(p.companyId, p.id);
    return view;
  }

  async addEntry(actor: Actor, companyId: string | undefined, profileId: string, dto: ProfileEntryInputDto): Promise<ProfileEntryDto> {
    const p = await this.load(companyId, profileId);
    return toEntryDto(await this.repo.insertEntry(p.companyId, p.id, await this.entryFields(p.companyId, dto, '')));
  }

  async updateEntry(actor: Actor, companyId: string | undefined, entryId: string, dto: UpdateProfileEntryDto): Promise<ProfileEntryDto> {
    const e = await this.loadEntry(companyId, entryId);
    const policy = dto.policy !== undefined || dto.effect !== undefined ? policyOf(dto.policy, dto.effect) : undefined;
    if (dto.toolName !== undefined && e.selectorType !== 'tool_name')
      throw badRequest('Only a tool_name entry has a toolName', { field: 'toolName' });
    if (dto.toolName === null) throw badRequest('A tool_name entry needs its toolName', { field: 'toolName' });
    if (policy === 'ask' && (await this.isLocal(e.companyId, e.connectionId))) throw askOnLocal();
    return toEntryDto(await this.repo.updateEntry(e.companyId, e.id, { policy, toolName: dto.toolName ?? undefined }));
  }

  async removeEntry(actor: Actor, companyId: string | undefined, entryId: string): Promise<ProfileEntryDto> {
    const e = await this.loadEntry(companyId, entryId);
    await this.repo.deleteEntry(e.companyId, e.id);
    return toEntryDto(e);
  }

  async bind(actor: Actor, companyId: string, profileId: string, dto: BindToolProfileDto): Promise<ToolProfileDto> {
    const p = await this.inCompany(companyId, profileId);
    await this.checkTarget(companyId, dto.targetType, dto.targetId);
    await this.repo.bind(companyId, p.id, {
      targetType: dto.targetType,
      targetId: dto.targetType === 'agent' ? dto.targetId.toLowerCase() : companyId,
      priority: dto.priority ?? 100,
      createdByAgentId: actor.kind === 'agent' ? actor.agentId : null,
      createdByUserId: actor.kind === 'board' ? actor.userId : null,
    });
    return this.view(companyId, p);
  }

  async unbind(companyId: string, profileId: string, dto: UnbindToolProfileDto): Promise<ToolProfileDto> {
    const p = await this.inCompany(companyId, profileId);
    const removed = await this.repo.unbind(
      companyId,
      p.id,
      dto.targetType,
      dto.targetType === 'agent' ? dto.targetId.toLowerCase() : companyId,
    );
    if (!removed) throw notFound('Binding');
    return this.view(companyId, p);
  }

  /** What applies to one agent: its profiles and the policy of every tool of the company's connections. */
  async effective(companyId: string, agentId: string): Promise<EffectiveProfilesDto> {
    await this.checkTarget(companyId, 'agent', agentId);
    const profiles = await this.repo.profilesForAgent(companyId, agentId.toLowerCase());
    const ids = profiles.map((p) => p.id);
    const [entries, bindings, remote, local] = await Promise.all([
      this.repo.entriesOf(companyId, ids),
      this.repo.bindingsOf(companyId, ids),
      this.connections.activeRemoteTools(companyId),
      this.connections.activeLocalConnections(companyId),
    ]);
    const total = remote.length;
    return {
      agentId,
      profiles: profiles.map((p) => toProfileDto(p, entries, bindings, total)),
      entries: entries.map(toEntryDto),
      bindings: bindings.map(toBindingDto),
      tools: remote.map((t) => ({
        connectionId: t.connectionId,
        toolPrefix: t.toolPrefix,
        toolName: t.toolName,
        agentToolName: `${t.toolPrefix}__${t.toolName}`,
        policy: policyFor(profiles, entries, {
          applicationId: t.applicationId,
          connectionId: t.connectionId,
          toolName: t.toolName,
          catalogEntryId: t.id,
        }),
      })),
      localConnectionIds: local
        .filter(
          (c) =>
            policyFor(profiles, entries, { applicationId: c.applicationId, connectionId: c.id, toolName: '*', catalogEntryId: null }) !==
            'deny',
        )
        .map((c) => c.id),
    };
  }

  /** The profiles and entries that apply to an agent (the gateway's and the run configuration's input). */
  async forAgent(companyId: string, agentId: string): Promise<{ profiles: ToolProfile[]; entries: ProfileEntry[] }> {
    const profiles = await this.repo.profilesForAgent(companyId, agentId.toLowerCase());
    return {
      profiles,
      entries: profiles.length
        ? await this.repo.entriesOf(
            companyId,
            profiles.map((p) => p.id),
          )
        : [],
    };
  }

  private async entryFields(companyId: string, e: ProfileEntryInputDto, at: string): Promise<EntryFields> {
    const field = (name: string) => (at ? `${at}.${name}` : name);
    const policy = policyOf(e.policy, e.effect);
    const fields: EntryFields = {
      selectorType: e.selectorType,
      policy,
      applicationId: null,
      connectionId: null,
      catalogEntryId: null,
      toolName: null,
    };
    const need = (name: 'applicationId' | 'connectionId' | 'catalogEntryId' | 'toolName') => {
      const v = e[name];
      if (v === undefined || v === null) throw badRequest(`A ${e.selectorType} entry needs ${name}`, { field: field(name) });
      return v;
    };
    switch (e.selectorType) {
      case 'application':
        fields.applicationId = need('applicationId');
        if (!(await this.connections.findApplication(companyId, fields.applicationId))) throw badReference(field('applicationId'));
        break;
      case 'connection':
        fields.connectionId = need('connectionId');
        break;
      case 'catalog_entry': {
        const entry = await this.connections.findCatalogEntry(companyId, need('catalogEntryId'));
        if (!entry) throw badReference(field('catalogEntryId'));
        Object.assign(fields, { catalogEntryId: entry.id, connectionId: entry.connectionId, toolName: entry.toolName });
        break;
      }
      case 'tool_name':
        fields.toolName = need('toolName');
        fields.connectionId = e.connectionId ?? null;
        break;
    }
    if (fields.connectionId && !(await this.connections.findConnection(companyId, fields.connectionId)))
      throw badReference(field('connectionId'));
    if (policy === 'ask' && (await this.isLocal(companyId, fields.connectionId))) throw askOnLocal();
    return fields;
  }

  private async isLocal(companyId: string, connectionId: string | null): Promise<boolean> {
    if (!connectionId) return false;
    return (await this.connections.findConnection(companyId, connectionId))?.transport === 'local_stdio';
  }

  private async checkTarget(companyId: string, targetType: string, targetId: string): Promise<void> {
    if (targetType === 'company') {
      if (targetId !== companyId) throw badReference('targetId');
      return;
    }
    const owner = isUuid(targetId) ? await this.refs.companyOf('agent', targetId) : null;
    if (owner !== companyId) throw badReference(targetType === 'agent' ? 'targetId' : 'agentId');
  }

  /** The profile of the route's company (resolved and checked by the guard): 404 unknown or another company's. */
  private async load(companyId: string | undefined, id: string): Promise<ToolProfile> {
    if (!companyId) throw notFound('Tool profile');
    return this.inCompany(companyId, id);
  }

  private async inCompany(companyId: string, id: string): Promise<ToolProfile> {
    const p = isUuid(id) ? await this.repo.findProfile(companyId, id) : null;
    if (!p) throw notFound('Tool profile');
    return p;
  }

  /** The entry of the route's company (resolved and checked by the guard): 404 unknown or another company's. */
  private async loadEntry(companyId: string | undefined, id: string): Promise<ProfileEntry> {
    const e = companyId && isUuid(id) ? await this.repo.findEntry(companyId, id) : null;
    return e ?? Promise.reject(notFound('Tool profile entry'));
  }

  private async view(companyId: string, p: ToolProfile): Promise<ToolProfileDto> {
    return (await this.views(companyId, [p]))[0];
  }

  private async views(companyId: string, profiles: ToolProfile[]): Promise<ToolProfileDto[]> {
    const ids = profiles.map((p) => p.id);
    const [entries, bindings, tools] = await Promise.all([
      ids.length ? this.repo.entriesOf(companyId, ids) : [],
      ids.length ? this.repo.bindingsOf(companyId, ids) : [],
      this.connections.activeRemoteTools(companyId),
    ]);
    return profiles.map((p) => toProfileDto(p, entries, bindings, tools.length));
  }
}

const badReference = (field: string) => toolError('invalid_reference', `${field} does not name a record of this company`, { field });
const askOnLocal = () =>
  toolError(
    'unsupported_option',
    '"ask" applies to remote connections (their calls pass the service’s gateway); a local command runs inside the agent’s CLI: allow or deny it',
  );
