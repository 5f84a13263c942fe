import { Injectable, OnModuleInit } from '@nestjs/common';
import { DesiredSkills } from '../agents/desired-skills.port';
import { AgentSkillsService } from './agent-skills.service';

/** desiredSkills on agent create and hire: resolved to canonical keys like skills/sync. */
@Injectable()
export class SkillDesiredSkills implements OnModuleInit {
  constructor(
    private readonly desiredSkills: DesiredSkills,
    private readonly agentSkills: AgentSkillsService,
  ) {}

  onModuleInit(): void {
    this.desiredSkills.register({ resolve: (companyId, refs) => this.agentSkills.resolveReferences(companyId, refs) });
  }
}
