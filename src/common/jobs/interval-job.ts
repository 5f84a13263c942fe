import { Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { SchedulerRegistry } from '@nestjs/schedule';

/** One timer of a job: its name in the scheduler registry, its period, what a failure is logged as, and the work. */
export interface JobInterval {
  name: string;
  everyMs: number;
  /** a failure is logged as `${what} failed: …` */
  what: string;
  run: () => Promise<unknown> | unknown;
}

/**
 * The scaffolding of a `<domain>.jobs.ts`: its timers run only where the app runs its scheduler
 * (the SchedulerRegistry is there: `createApp({ scheduler })`; tests tick by hand), each timer's work
 * runs at most once at a time on this instance (a tick that finds the last one still running does
 * nothing), a failure is logged and the next tick runs again, and nothing starts once the app shuts
 * down (the timers are removed, `stopped` is set for work in progress to stop early).
 *
 * What a tick does stays the job's own: it claims its work in the database, so that across instances
 * a due item is acted on once, and it runs each company in a transaction of its own, so that one
 * company's failure never stops the others.
 */
export abstract class IntervalJob implements OnApplicationBootstrap, OnApplicationShutdown {
  protected readonly logger: Logger;
  /** set when the app shuts down: loops over work check it between items */
  protected stopped = false;
  private readonly running = new Set<string>();

  protected constructor(
    loggerName: string,
    private readonly registry?: SchedulerRegistry,
  ) {
    this.logger = new Logger(loggerName);
  }

  /** The job's timers; a job on a cron schedule declares none and calls `guarded` from its `@Cron` method. */
  protected intervals(): JobInterval[] {
    return [];
  }

  onApplicationBootstrap(): void {
    if (!this.registry) return;
    for (const i of this.intervals())
      this.registry.addInterval(
        i.name,
        setInterval(() => void this.guarded(i), i.everyMs),
      );
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    for (const { name } of this.intervals()) {
      try {
        this.registry?.deleteInterval(name);
      } catch {
        /* not registered */
      }
    }
  }

  /** Runs a timer's work now, as its timer would: not while its last run is still going, nor once stopped; a failure is logged. */
  protected async guarded(i: Pick<JobInterval, 'name' | 'what' | 'run'>): Promise<void> {
    if (this.running.has(i.name) || this.stopped) return;
    this.running.add(i.name);
    try {
      await i.run();
    } catch (err) {
      if (!this.stopped) this.logger.error(`${i.what} failed: ${(err as Error).message}`);
    } finally {
      this.running.delete(i.name);
    }
  }
}
