import { Injectable, Logger } from '@nestjs/common';
import type { FinalRunStatus } from '../adapters/run.types';

export interface RunFinishedEvent {
  runId: string;
  companyId: string;
  agentId: string;
  issueId: string | null;
  status: FinalRunStatus;
  errorCode: string | null;
  /** what the run reported (usage may carry costCents): the costs module can book it */
  usage: Record<string, unknown> | null;
  result: Record<string, unknown> | null;
  /** when the run was queued, claimed (null: it never started) and ended */
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export interface RunStartedEvent {
  runId: string;
  companyId: string;
  agentId: string;
  adapterType: string;
  createdAt: Date;
  startedAt: Date;
}

export type RunFinishedListener = (e: RunFinishedEvent) => void | Promise<void>;

/**
 * A run that had already been ended (cancelled, paused, reaped, on this or another instance) when
 * its process ended: its usage as the process reported it to the end (model calls that completed
 * after the stop included). The costs module books what it adds to what was booked at the end.
 */
export interface RunUsageSettledEvent {
  runId: string;
  companyId: string;
  agentId: string;
  issueId: string | null;
  usage: Record<string, unknown>;
}

/**
 * Run lifecycle hooks for other modules, fired after the ending transaction commits. The issues
 * module subscribes to release the checkouts of runs that ended (reaped, cancelled, failed); the
 * costs module books a run's usage when it ends and what its process reported after that.
 */
@Injectable()
export class RunLifecycleEvents {
  private readonly logger = new Logger('RunLifecycleEvents');
  private readonly finished: RunFinishedListener[] = [];
  private readonly started: Array<(e: RunStartedEvent) => void> = [];
  private readonly settled: Array<(e: RunUsageSettledEvent) => void | Promise<void>> = [];

  /** A run was claimed by this instance (after commit); listeners must not throw or block. */
  onRunStarted(listener: (e: RunStartedEvent) => void): void {
    this.started.push(listener);
  }

  emitStarted(e: RunStartedEvent): void {
    for (const l of this.started) {
      try {
        l(e);
      } catch (err) {
        this.logger.error(`run-started listener failed for run ${e.runId}: ${(err as Error).message}`);
      }
    }
  }

  onUsageSettled(listener: (e: RunUsageSettledEvent) => void | Promise<void>): void {
    this.settled.push(listener);
  }

  async emitUsageSettled(e: RunUsageSettledEvent): Promise<void> {
    for (const l of this.settled) {
      try {
        await l(e);
      } catch (err) {
        this.logger.error(`usage-settled listener failed for run ${e.runId}: ${(err as Error).message}`);
      }
    }
  }

  onRunFinished(listener: RunFinishedListener): void {
    this.finished.push(listener);
  }

  async emitFinished(e: RunFinishedEvent): Promise<void> {
    for (const l of this.finished) {
      try {
        await l(e);
      } catch (err) {
        this.logger.error(`run-finished listener failed for run ${e.runId}: ${(err as Error).message}`);
      }
    }
  }
}
