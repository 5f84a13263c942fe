import { Injectable, Logger } from '@nestjs/common';
import type { Actor } from '../../../common/auth/actor';

/** The environment test's prompt: what it used, to book. */
export interface ProbeUsage {
  /** who asked for the test (the booking's reporter) */
  actor: Actor;
  companyId: string;
  /** the agent the test ran for (its cost event); null: the new-agent form, before any agent exists */
  agentId: string | null;
  adapterType: string;
  /** the call's usage record, as a run's would say it (provider, biller, model, tokens, priced cost) */
  usage: Record<string, unknown>;
}

/**
 * Port: the costs module (above adapters) books an environment test's model call (costs/probe-costs.port-impl.ts
 * registers it at start-up; until then nothing is booked). A booking that fails is logged and does
 * not fail the test.
 */
@Injectable()
export class ProbeCosts {
  private readonly logger = new Logger('ProbeCosts');
  private booker: ((u: ProbeUsage) => Promise<void>) | null = null;

  register(booker: (u: ProbeUsage) => Promise<void>): void {
    this.booker = booker;
  }

  async book(u: ProbeUsage): Promise<void> {
    try {
      await this.booker?.(u);
    } catch (err) {
      this.logger.error(`could not book the environment test of ${u.adapterType} in company ${u.companyId}: ${(err as Error).message}`);
    }
  }
}
