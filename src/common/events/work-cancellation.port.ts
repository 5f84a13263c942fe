import { Injectable } from '@nestjs/common';

export interface CancellationScope {
  companyId: string;
  /** only these agents; omit for the whole company */
  agentIds?: string[];
  projectId?: string;
  /** only work on this issue (e.g. an interrupting comment) */
  issueId?: string;
}

export type CancellationListener = (scope: CancellationScope, reason: string) => Promise<void>;

/**
 * When a scope stops (agent paused or terminated, company archived, budget hard stop) its queued
 * wakeups and in-flight runs must stop too. Called inside the stopping transaction; listeners
 * (the heartbeat engine, registered in heartbeat/work-cancellation.port-impl.ts) cancel rows
 * there and kill processes after commit.
 */
@Injectable()
export class WorkCancellation {
  private readonly listeners: CancellationListener[] = [];

  register(listener: CancellationListener): void {
    this.listeners.push(listener);
  }

  async cancel(scope: CancellationScope, reason: string): Promise<void> {
    for (const l of this.listeners) await l(scope, reason);
  }
}
