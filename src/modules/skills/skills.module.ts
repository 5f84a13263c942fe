import { Module, OnModuleInit } from '@nestjs/common';
import { AgentConfigService } from '../agents/agent-config.service';
import { AgentsModule } from '../agents/agents.module';
import { RunEnvResolver } from '../heartbeat/run-env.service';
import { RunLifecycleEvents } from '../heartbeat/run-lifecycle-events';
import { ProjectsModule } from '../projects/projects.module';
import { AgentSkillsController } from './agent-skills.controller';
import { AgentSkillsService } from './agent-skills.service';
import { SkillCatalogController } from './catalog.controller';
import { SkillCatalogService } from './skill-catalog.service';
import { SkillImportService } from './skill-import.service';
import { SkillsController } from './skills.controller';
import { SkillsJobs } from './skills.jobs';
import { SkillsRepository } from './skills.repository';
import { SkillsService } from './skills.service';

/**
 * Company skills, the shipped catalog, imports and audits, and delivery of skills to agents' runs.
 * Exported: SkillsService (install a catalog skill by key; list skills with files; import skills
 * from in-memory files), SkillCatalogService, AgentSkillsService.
 */
@Module({
  imports: [AgentsModule, ProjectsModule],
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
  ) {}

  onModuleInit(): void {
    // desiredSkills on agent create and hire: resolved to canonical keys like skills/sync
    this.agentConfig.skillResolver = { resolve: (companyId, refs) => this.agentSkills.resolveReferences(companyId, refs) };
    // every run of a process or local CLI agent gets its skills as files (SERVICE_SKILLS_DIR)
    this.runEnv.registerLaunchContributor((ctx) => this.agentSkills.materialiseForRun(ctx));
    this.runEvents.onRunFinished((e) => this.agentSkills.cleanupRun(e.runId));
  }
}
