import * as fs from 'node:fs';
import * as path from 'node:path';
import { Injectable, Optional } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { IntervalJob, JobInterval } from '../../common/jobs/interval-job';
import { ephemeralRoot } from './skill-delivery';

/** Ephemeral skill folders older than this are removed even if their run's end was never seen here. */
const EPHEMERAL_MAX_AGE_MS = 3 * 24 * 3600 * 1000;

/**
 * Removes per-run skill folders left behind (the run ended on another instance, or the service
 * stopped mid-run). Normal cleanup happens when the run ends; this is the safety net. Local
 * filesystem only: nothing to claim in the database.
 */
@Injectable()
export class SkillsJobs extends IntervalJob {
  constructor(@Optional() registry?: SchedulerRegistry) {
    super('SkillsJobs', registry);
  }

  protected intervals(): JobInterval[] {
    return [{ name: 'skills-ephemeral-sweep', everyMs: 10 * 60 * 1000, what: 'skills ephemeral sweep', run: () => this.sweepEphemeral() }];
  }

  sweepEphemeral(now = Date.now()): number {
    let removed = 0;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(ephemeralRoot(), { withFileTypes: true });
    } catch {
      return 0;
    }
    for (const e of entries) {
      const p = path.join(ephemeralRoot(), e.name);
      try {
        if (now - fs.statSync(p).mtimeMs > EPHEMERAL_MAX_AGE_MS) {
          fs.rmSync(p, { recursive: true, force: true });
          removed++;
        }
      } catch (err) {
        this.logger.warn(`could not sweep ${p}: ${(err as Error).message}`);
      }
    }
    return removed;
  }
}
