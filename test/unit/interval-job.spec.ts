import { SchedulerRegistry } from '@nestjs/schedule';
import { IntervalJob, JobInterval } from '../../src/common/jobs/interval-job';

/** A job with one timer whose work waits until the test releases it. */
class Job extends IntervalJob {
  runs = 0;
  fail: Error | null = null;
  release: () => void = () => undefined;
  logged: string[] = [];

  constructor(registry?: SchedulerRegistry) {
    super('TestJob', registry);
    (this.logger as unknown as { error: (m: string) => void }).error = (m) => this.logged.push(m);
  }

  protected intervals(): JobInterval[] {
    return [{ name: 'test.tick', everyMs: 3_600_000, what: 'test tick', run: () => this.work() }];
  }

  tick(): Promise<void> {
    return this.guarded(this.intervals()[0]);
  }

  private async work(): Promise<void> {
    this.runs++;
    await new Promise<void>((resolve) => (this.release = resolve));
    if (this.fail) throw this.fail;
  }
}

describe('IntervalJob', () => {
  it('registers its timers only where the app runs its scheduler, and removes them on shutdown', () => {
    const registry = new SchedulerRegistry();
    const job = new Job(registry);
    job.onApplicationBootstrap();
    expect(registry.getIntervals()).toEqual(['test.tick']);
    job.onApplicationShutdown();
    expect(registry.getIntervals()).toEqual([]);

    const unscheduled = new Job();
    unscheduled.onApplicationBootstrap();
    unscheduled.onApplicationShutdown();
  });

  it('runs a timer once at a time: a tick while the last one runs does nothing', async () => {
    const job = new Job();
    const first = job.tick();
    await job.tick();
    expect(job.runs).toBe(1);
    job.release();
    await first;
    const next = job.tick();
    expect(job.runs).toBe(2);
    job.release();
    await next;
  });

  it('logs a failure and runs again at the next tick', async () => {
    const job = new Job();
    job.fail = new Error('boom');
    const failing = job.tick();
    job.release();
    await failing;
    expect(job.logged).toEqual(['test tick failed: boom']);
    job.fail = null;
    const next = job.tick();
    job.release();
    await next;
    expect(job.runs).toBe(2);
  });

  it('starts nothing once the app shuts down, and logs no failure of work cut short by it', async () => {
    const job = new Job();
    job.fail = new Error('connection closed');
    const running = job.tick();
    job.onApplicationShutdown();
    job.release();
    await running;
    await job.tick();
    expect(job.runs).toBe(1);
    expect(job.logged).toEqual([]);
  });
});
