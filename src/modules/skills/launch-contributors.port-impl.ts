import { Injectable, OnModuleInit } from '@nestjs/common';
import { LaunchContributors } from '../heartbeat/launch-contributors.port';
import { AgentSkillsService } from './agent-skills.service';

/** Every run of a process or local CLI agent gets its skills as files (SERVICE_SKILLS_DIR). */
@Injectable()
export class RunSkillFiles implements OnModuleInit {
  constructor(
    private readonly contributors: LaunchContributors,
    private readonly agentSkills: AgentSkillsService,
  ) {}

  onModuleInit(): void {
    this.contributors.add((ctx) => this.agentSkills.materialiseForRun(ctx));
  }
}
