import { Injectable, OnModuleInit } from '@nestjs/common';
import { ApprovalHandlers } from '../approvals/approval-handlers.port';
import { ChangeSuggestionsService } from './change-suggestions.service';

/** What approving a suggested change does: the built-in agents apply it (agent configuration, skill files). */
@Injectable()
export class ApprovalHandlersRegistration implements OnModuleInit {
  constructor(
    private readonly handlers: ApprovalHandlers,
    private readonly suggestions: ChangeSuggestionsService,
  ) {}

  onModuleInit(): void {
    this.handlers.register('agent_config_change', { approve: (a, actor) => this.suggestions.applyAgentChange(a, actor) });
    this.handlers.register('skill_change', { approve: (a, actor) => this.suggestions.applySkillChange(a, actor) });
  }
}
