import { Module } from '@nestjs/common';
import { AgentIdentitiesModule } from '../../common/process/agent-identities.module';
import { FoldersModule } from '../folders/folders.module';
import { AccessModule } from '../access/access.module';
import { AdaptersModule } from '../adapters/adapters.module';
import { AgentsModule } from '../agents/agents.module';
import { BuiltInAgentsModule } from '../built-in-agents/built-in-agents.module';
import { ProjectsModule } from '../projects/projects.module';
import { AgentSkillsController } from './agent-skills.controller';
import { AgentSkillsService } from './agent-skills.service';
import { SkillCatalogController } from './catalog.controller';
import { SkillCatalogService } from './skill-catalog.service';
import { SkillImportService } from './skill-import.service';
import { SkillScanService } from './skill-scan.service';
import { SkillSourceReader } from './skill-source-reader';
import { SkillUpdateService } from './skill-update.service';
import { SkillsController } from './skills.controller';
import { SkillsJobs } from './skills.jobs';
import { SkillsRepository } from './skills.repository';
import { SkillsService } from './skills.service';
import { SkillDesiredSkills } from './desired-skills.port-impl';
import { SkillFolderItems } from './folder-items.port-impl';
import { InviteBundledSkills } from './invite-skills.port-impl';
import { RunSkillFiles } from './launch-contributors.port-impl';
import { RunSkillCleanup } from './run-lifecycle-events.port-impl';
import { BuiltInSkillsBridge } from './skills-bridge.port-impl';
import { AuthorizationModule } from '../authorization/authorization.module';
import { HeartbeatModule } from '../heartbeat/heartbeat.module';

/**
 * Company skills, the shipped catalog, imports and audits, and delivery of skills to agents' runs.
 * Exported: SkillsService (install a catalog skill by key; list skills with files; import skills
 * from in-memory files), SkillCatalogService, AgentSkillsService.
 */
@Module({
  imports: [
    AgentIdentitiesModule,
    AdaptersModule,
    HeartbeatModule,
    AuthorizationModule,
    AgentsModule,
    ProjectsModule,
    BuiltInAgentsModule,
    AccessModule,
    FoldersModule,
  ],
  controllers: [SkillsController, SkillCatalogController, AgentSkillsController],
  providers: [
    SkillsRepository,
    SkillsService,
    SkillCatalogService,
    SkillSourceReader,
    SkillImportService,
    SkillScanService,
    SkillUpdateService,
    AgentSkillsService,
    SkillsJobs,
    SkillFolderItems,
    SkillDesiredSkills,
    RunSkillFiles,
    RunSkillCleanup,
    InviteBundledSkills,
    BuiltInSkillsBridge,
  ],
  exports: [SkillsService, SkillCatalogService, AgentSkillsService],
})
export class SkillsModule {}
