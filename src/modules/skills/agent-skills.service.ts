import * as fs from 'node:fs';
import { Injectable, Logger } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import type { TreeScope } from '../../common/fs/tenant-dir';
import { tenantRights } from '../../common/fs/tenant-rights';
import { PathGuard } from '../../common/paths/path-guard';
import { AgentIdentities } from '../../common/process/agent-identities';
import { AppConfig } from '../../config/app-config';
import { isUuid } from '../../common/http/uuid';
import { desiredSkillsOf, withDesiredSkills } from '../agents/agent-fields';
import { AdapterExecutors } from '../adapters/adapter-executors';
import type { SkillDelivery } from '../adapters/adapter.types';
import { AgentLookup } from '../agents/agent-lookup.service';
import { AuthorizationService } from '../authorization/authorization.service';
import { SkillCatalogService } from './skill-catalog.service';
import {
  DeliverableSkill,
  ephemeralDirOf,
  materialiseEphemeral,
  readManifest,
  runtimeNames,
  SKILLS_DIR_ENV,
  syncModeOf,
  type SkillSyncMode,
  RunScratchTarget,
  syncPersistent,
  unmanagedFolders,
} from './skill-delivery';
import { normalizeRef } from './skill-files';
import { skillError } from './skills.errors';
import { SkillRecord, SkillsRepository } from './skills.repository';
import { SkillsService } from './skills.service';

export interface SkillSnapshotEntry {
  key: string;
  runtimeName: string;
  desired: boolean;
  managed: boolean;
  /** configured (materialised at each run) | installed | pending | stale | missing | blocked (audit fail) | recorded (unsupported adapter) | external */
  state: string;
  /** company_managed | user_installed | external_unknown */
  origin: string;
  required?: boolean;
  skillId?: string | null;
  name?: string | null;
}

export interface AgentSkillSnapshot {
  agentId?: string;
  companyId?: string;
  adapterType: string;
  supported: boolean;
  mode: string;
  desiredSkills: string[];
  entries: SkillSnapshotEntry[];
  warnings: string[];
}

/**
 * Skills of agents: resolving references (exact id, normalised key, unique slug), the persisted
 * desired set (`adapterConfig.serviceSkillSync.desiredSkills`, canonical keys, exactly as sent),
 * the snapshot, and materialising files for a run.
 */
@Injectable()
export class AgentSkillsService {
  private readonly logger = new Logger('AgentSkills');

  constructor(
    private readonly repo: SkillsRepository,
    private readonly skills: SkillsService,
    private readonly catalog: SkillCatalogService,
    private readonly agents: AgentLookup,
    private readonly authz: AuthorizationService,
    private readonly identities: AgentIdentities,
    private readonly executors: AdapterExecutors,
    config: AppConfig,
  ) {
    this.paths = new PathGuard(config.pathRoots);
  }

  private readonly paths: PathGuard;

  /** How a company's workspace folders are read: with its agents' rights, never into protected paths. */
  private readScope(companyId: string): TreeScope {
    return { rights: tenantRights(() => this.identities.companyGid(companyId)), isProtected: this.paths.protectedCheck() };
  }

  /** How skills reach the runs of an adapter type: its executor says (none here: unsupported). */
  private modeOf(adapterType: string, config: Record<string, unknown>): SkillSyncMode {
    return syncModeOf(this.deliveryOf(adapterType), config);
  }

  private deliveryOf(adapterType: string): SkillDelivery | undefined {
    return this.executors.get(adapterType)?.description.skills;
  }

  /**
   * Canonical keys of the references, in the order sent (duplicates once). Unknown or ambiguous
   * references fail with `Invalid company skill selection (...)` and nothing is changed.
   */
  async resolveReferences(companyId: string, refs: string[]): Promise<string[]> {
    if (!refs.length) return [];
    await this.skills.ensureBundled(companyId);
    const rows = await this.repo.refsMatching(
      companyId,
      refs.map((r) => r.trim().toLowerCase()).filter((r) => isUuid(r)),
      refs.map(normalizeRef),
    );
    const out: string[] = [];
    const ambiguous: string[] = [];
    const unknown: string[] = [];
    for (const ref of refs) {
      const trimmed = ref.trim();
      const n = normalizeRef(trimmed);
      const hit = (isUuid(trimmed) ? rows.find((r) => r.id === trimmed.toLowerCase()) : undefined) ?? rows.find((r) => r.key === n);
      if (hit) {
        out.push(hit.key);
        continue;
      }
      const bySlug = rows.filter((r) => r.slug === n);
      if (bySlug.length === 1) out.push(bySlug[0].key);
      else if (bySlug.length > 1) ambiguous.push(trimmed);
      else unknown.push(trimmed);
    }
    if (ambiguous.length || unknown.length) {
      const parts = [
        ...(ambiguous.length ? [`ambiguous references: ${ambiguous.join('; ')}`] : []),
        ...(unknown.length ? [`unknown references: ${unknown.join('; ')}`] : []),
      ];
      throw skillError('invalid_skill_selection', `Invalid company skill selection (${parts.join('; ')})`, { ambiguous, unknown });
    }
    return [...new Set(out)];
  }

  async snapshot(actor: Actor, routeCompanyId: string | undefined, agentId: string): Promise<AgentSkillSnapshot> {
    const agent = await this.agents.byId(routeCompanyId, agentId);
    await this.authz.assert({ actor, action: 'agent.config.read', companyId: agent.companyId, targetAgentId: agent.id });
    return {
      agentId: agent.id,
      companyId: agent.companyId,
      ...(await this.buildSnapshot(agent.companyId, agent.adapterType, agent.adapterConfig)),
    };
  }

  /** Replaces the agent's desired set with exactly the resolved references; returns the new snapshot. */
  async sync(actor: Actor, routeCompanyId: string | undefined, agentId: string, refs: string[]): Promise<AgentSkillSnapshot> {
    const agent = await this.agents.byId(routeCompanyId, agentId, true);
    await this.authz.assert({ actor, action: 'agent.config.update', companyId: agent.companyId, targetAgentId: agent.id });
    const keys = await this.resolveReferences(agent.companyId, refs);
    agent.adapterConfig = withDesiredSkills(agent.adapterConfig, keys);
    await this.agents.setAdapterConfig(agent.companyId, agent.id, agent.adapterConfig);
    return {
      agentId: agent.id,
      companyId: agent.companyId,
      ...(await this.buildSnapshot(agent.companyId, agent.adapterType, agent.adapterConfig)),
    };
  }

  /** Skills a run receives: the bundled ones plus the desired ones, minus those whose audit failed. */
  private async deliverable(
    companyId: string,
    desired: string[],
  ): Promise<{ skills: SkillRecord[]; missing: string[]; blocked: SkillRecord[] }> {
    const bundledKeys = this.catalog.bundled().map((c) => c.key);
    await this.skills.ensureBundled(companyId);
    const rows = await this.repo.byKeys(companyId, [...new Set([...bundledKeys, ...desired])]);
    const byKey = new Map(rows.map((r) => [r.key, r]));
    const ordered = [...new Set([...bundledKeys, ...desired])].map((k) => byKey.get(k)).filter((r): r is SkillRecord => !!r);
    return {
      skills: ordered.filter((r) => r.audit?.verdict !== 'fail'),
      blocked: ordered.filter((r) => r.audit?.verdict === 'fail'),
      missing: desired.filter((k) => !byKey.has(k)),
    };
  }

  async buildSnapshot(companyId: string, adapterType: string, config: Record<string, unknown>): Promise<AgentSkillSnapshot> {
    const desired = desiredSkillsOf(config);
    const mode = this.modeOf(adapterType, config);
    const warnings: string[] = [];
    const { skills, missing, blocked } = await this.deliverable(companyId, desired);
    const names = runtimeNames([...skills, ...blocked]);
    const cwd = typeof config.cwd === 'string' ? config.cwd : null;
    const manifest = mode === 'persistent' && cwd ? readManifest(cwd, this.readScope(companyId)).skills : {};
    const stateOf = (s: SkillRecord): string => {
      if (mode === 'unsupported') return 'recorded';
      if (s.audit?.verdict === 'fail') return 'blocked';
      if (mode === 'ephemeral') return 'configured';
      const m = manifest[names.get(s.key)!];
      return !m ? 'pending' : m.contentHash === s.contentHash && m.key === s.key ? 'installed' : 'stale';
    };
    const entries: SkillSnapshotEntry[] = [...skills, ...blocked].map((s) => ({
      key: s.key,
      runtimeName: names.get(s.key)!,
      desired: desired.includes(s.key),
      managed: true,
      state: stateOf(s),
      origin: 'company_managed',
      required: s.bundled,
      skillId: s.id,
      name: s.name,
    }));
    for (const k of missing) {
      entries.push({
        key: k,
        runtimeName: k.split('/').pop() ?? k,
        desired: true,
        managed: true,
        state: 'missing',
        origin: 'company_managed',
        skillId: null,
        name: null,
      });
      warnings.push(`${k} is not a skill of the company (deleted?); it is not delivered`);
    }
    for (const b of blocked) warnings.push(`${b.key} failed its audit (${b.audit?.codes.join(', ')}); it is not delivered`);
    if (mode === 'persistent' && cwd) {
      for (const u of unmanagedFolders(cwd, this.readScope(companyId))) {
        entries.push({
          key: u.name,
          runtimeName: u.name,
          desired: false,
          managed: false,
          state: 'external',
          origin: u.hasSkillMd ? 'user_installed' : 'external_unknown',
        });
      }
    }
    if (mode === 'unsupported') warnings.push(`The ${adapterType} adapter cannot receive skill files; the assignment is recorded only`);
    if (mode === 'ephemeral' && this.deliveryOf(adapterType) === 'persistent_in_cwd')
      warnings.push('No cwd configured: skills are materialised per run instead of kept in the working directory');
    return { adapterType, supported: mode !== 'unsupported', mode, desiredSkills: desired, entries, warnings };
  }

  /**
   * The run-launch hook: writes the agent's skills where its adapter reads them and returns
   * `SERVICE_SKILLS_DIR`. Unsupported adapters get nothing.
   */
  async materialiseForRun(ctx: {
    companyId: string;
    agentId: string;
    runId: string;
    scratch?: RunScratchTarget;
  }): Promise<Record<string, string>> {
    const bundled = this.catalog.bundled();
    const got = await this.repo.launchDelivery(
      ctx.companyId,
      ctx.agentId,
      bundled.map((c) => c.key),
    );
    if (!got) return {};
    const mode = this.modeOf(got.adapterType, got.adapterConfig);
    if (mode === 'unsupported') return {};
    const byKey = new Map(got.skills.map((s) => [s.key, s]));
    // bundled skills come from the catalog when the company has not listed its skills yet
    for (const c of bundled)
      if (!byKey.has(c.key))
        byKey.set(c.key, { id: c.id, key: c.key, slug: c.slug, contentHash: c.contentHash, verdict: 'pass', files: c.storedFiles });
    const order = [...new Set([...bundled.map((c) => c.key), ...desiredSkillsOf(got.adapterConfig)])];
    const deliverable: DeliverableSkill[] = order
      .map((k) => byKey.get(k))
      .filter((s): s is NonNullable<typeof s> => !!s && s.verdict !== 'fail')
      .map((s) => ({ key: s.key, slug: s.slug, contentHash: s.contentHash, files: s.files }));
    const dir =
      mode === 'persistent'
        ? syncPersistent(String(got.adapterConfig.cwd), deliverable, this.paths.protectedCheck())
        : materialiseEphemeral(ctx.runId, deliverable, ctx.scratch);
    return { [SKILLS_DIR_ENV]: dir };
  }

  /** Removes a run's ephemeral folder (called when the run ends). */
  cleanupRun(runId: string): void {
    try {
      fs.rmSync(ephemeralDirOf(runId), { recursive: true, force: true });
    } catch (err) {
      this.logger.warn(`could not remove the skills folder of run ${runId}: ${(err as Error).message}`);
    }
  }
}
