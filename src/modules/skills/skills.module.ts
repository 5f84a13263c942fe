import { Module, OnModuleInit } from '@nestjs/common';
import { AgentIdentitiesModule } from '../../common/process/agent-identities.module';
import { FolderItemRegistry } from '../folders/folder-items';
import { FoldersModule } from '../folders/folders.module';
import { AgentConfigService } from '../agents/agent-config.service';
import { AccessModule } from '../access/access.module';
import { AdaptersModule } from '../adapters/adapters.module';
import { InvitesService } from '../access/invites.service';
import { AgentsModule } from '../agents/agents.module';
import { BuiltInAgentsModule } from '../built-in-agents/built-in-agents.module';
import { BuiltInAgentsService } from '../built-in-agents/built-in-agents.service';
import { RunEnvResolver } from '../heartbeat/run-env.service';
import { RunLifecycleEvents } from '../heartbeat/run-lifecycle-events';
import { ProjectsModule } from '../projects/projects.module';
import { AgentSkillsController } from './agent-skills.controller';
import { AgentSkillsService } from './agent-skills.service';
import { SkillCatalogController } from './catalog.controller';
import { CATALOG_KEY_PREFIX, SkillCatalogService } from './skill-catalog.service';
import { SkillImportService } from './skill-import.service';
import { SkillsController } from './skills.controller';
import { SkillsJobs } from './skills.jobs';
import { SkillsRepository } from './skills.repository';
import { isLocallyModified, SkillsService } from './skills.service';
import { skillError } from './skills.errors';
import { AuthorizationModule } from '../authorization/authorization.module';
import { HeartbeatModule } from '../heartbeat/heartbeat.module';

/**
 * Company skills, the shipped catalog, imports and audits, and delivery of skills to agents' runs.
 * Exported: SkillsService (install a catalog skill by key; list skills with files; import skills
 * from in-memory files), SkillCatalogService, AgentSkillsService.
 */
@Module({
  imports: [AgentIdentitiesModule, AdaptersModule, HeartbeatModule, AuthorizationModule, AgentsModule, ProjectsModule, BuiltInAgentsModule, AccessModule, FoldersModule],
  controllers: [SkillsController, SkillCatalogController, AgentSkillsController],
  providers: [SkillsRepository, SkillsService, SkillCatalogService, SkillImportService, AgentSkillsService, SkillsJobs],
  exports: [SkillsService, SkillCatalogService, AgentSkillsService],
})
export class SkillsModule implements OnModuleInit {
  constructor(
    private readonly agentConfig: AgentConfigService,
    private readonly agentSkills: AgentSkillsService,
    private readonly runEnv: RunEnvResolver,
    private readonly runEvents: RunLifecycleEvents,
    private readonly skills: SkillsService,
    private readonly builtIns: BuiltInAgentsService,
    private readonly invites: InvitesService,
    private readonly catalog: SkillCatalogService,
    private readonly folderItems: FolderItemRegistry,
    private readonly repo: SkillsRepository,
  ) {}

  onModuleInit(): void {
    // skills are filed in skill folders (the folders module counts and files them through this)
    this.folderItems.register('skill', {
      counts: (companyId) => this.repo.folderCounts(companyId),
      setFolder: (companyId, id, folderId) => this.repo.setFolder(companyId, id, folderId),
    });
    // desiredSkills on agent create and hire: resolved to canonical keys like skills/sync
    this.agentConfig.skillResolver = { resolve: (companyId, refs) => this.agentSkills.resolveReferences(companyId, refs) };
    // every run of a process or local CLI agent gets its skills as files (SERVICE_SKILLS_DIR)
    this.runEnv.registerLaunchContributor((ctx) => this.agentSkills.materialiseForRun(ctx));
    this.runEvents.onRunFinished((e) => this.agentSkills.cleanupRun(e.runId));
    // invite onboarding offers the bundled skills (the agent protocol) beside its own
    this.invites.extraSkills = () =>
      this.catalog.bundled().map((c) => ({ name: c.slug, description: c.description ?? '', markdown: c.storedFiles.find((f) => f.path === 'SKILL.md')?.content ?? '' }));
    // the built-in agents: the reflection coach's catalog skill, and approved skill suggestions
    this.builtIns.skills = {
      installCatalogSkill: async (companyId, slug, { reset }) => {
        try {
          const r = await this.skills.installCatalogSkill(companyId, slug, { force: reset });
          return { skillId: r.skill.id, key: r.skill.key, action: r.action };
        } catch (err) {
          // a locally edited copy is kept unless a reset asked for the shipped files
          const kept = (err as { code?: string }).code === 'skill_locally_modified' ? await this.skills.findSkill(companyId, `${CATALOG_KEY_PREFIX}/${slug}`) : null;
          if (kept && isLocallyModified(kept)) return { skillId: kept.id, key: kept.key, action: 'kept' };
          throw err;
        }
      },
      findSkill: async (companyId, ref) => {
        const s = await this.skills.findSkill(companyId, ref);
        return s ? { id: s.id, key: s.key, slug: s.slug } : null;
      },
      applySkillFiles: async (companyId, skillId, files) => {
        if (!files.length) throw skillError('invalid_skill_path', 'No files to apply');
        await this.skills.writeFiles(companyId, skillId, files);
      },
    };
  }
}
