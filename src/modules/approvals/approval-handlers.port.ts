import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import type { ApprovalEntity, ApprovalType } from './approval.entity';

/**
 * What deciding an approval of another type does (registered by the feature that creates such
 * approvals). Called in the decision's transaction: a failing `approve` leaves the approval pending.
 */
export interface ApprovalDecisionHandler {
  approve(approval: ApprovalEntity, actor: Actor): Promise<void>;
  reject?(approval: ApprovalEntity, actor: Actor): Promise<void>;
}

/**
 * What approving and rejecting an approval of a type does, decided by the feature that creates
 * such approvals (the built-in agents' change suggestions: `agent_config_change`, `skill_change`).
 * That module imports approvals and registers its handlers at start-up; a hire's decision goes
 * through HiredAgents instead.
 */
@Injectable()
export class ApprovalHandlers {
  readonly #handlers = new Map<string, ApprovalDecisionHandler>();

  register(type: Exclude<ApprovalType, 'hire_agent'>, handler: ApprovalDecisionHandler): void {
    this.#handlers.set(type, handler);
  }

  /** The handler of an approval's type, if one is registered. */
  of(type: string): ApprovalDecisionHandler | undefined {
    return this.#handlers.get(type);
  }
}
