import { Injectable, OnModuleInit } from '@nestjs/common';
import { RunLifecycleEvents } from '../heartbeat/run-lifecycle-events.port';
import { AgentSkillsService } from './agent-skills.service';

/** A run's skill files go when it ends. */
@Injectable()
export class RunSkillCleanup implements OnModuleInit {
  constructor(
    private readonly runEvents: RunLifecycleEvents,
    private readonly agentSkills: AgentSkillsService,
  ) {}

  onModuleInit(): void {
    this.runEvents.onRunFinished((e) => this.agentSkills.cleanupRun(e.runId));
  }
}
