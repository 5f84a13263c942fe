import { Injectable, Logger } from '@nestjs/common';
import { isGoneLocalOwner, isRecordedGroup, processStartTicks, terminateGroup, thisHost } from '../../common/process/process-groups';
import { RunRecoveryRepository } from './run-recovery.repository';

const DEFAULT_GRACE_SEC = 15;
/** a run claimed this long ago with no local process is not in the middle of being launched */
const LAUNCH_SLACK_MS = 2000;

/** The executor's hooks for one run: the group once the process exists, and the end of the run. */
export interface RunProcessTracker {
  started(pgid: number): void;
  /** the process ended (its group was killed with it): the recorded group is forgotten */
  ended(): Promise<void>;
}

/**
 * Process groups of agent processes, recorded with their runs so that none outlives a crash of
 * the instance that started it: on start-up and in every reaper pass, the groups of this host's
 * runs whose instance is gone (or that this instance no longer runs) are killed, SIGTERM then
 * SIGKILL after the agent's grace period, before those runs are finalised and before the agent's
 * next run can start.
 */
@Injectable()
export class RunProcessGroups {
  private readonly logger = new Logger('RunProcessGroups');

  constructor(private readonly repo: RunRecoveryRepository) {}

  track(companyId: string, runId: string): RunProcessTracker {
    let recorded: Promise<void> | null = null;
    let pgid: number | null = null;
    return {
      started: (pid) => {
        pgid = pid;
        recorded = this.repo.recordGroup(companyId, runId, pid, thisHost(), processStartTicks(pid)).catch((err) => {
          this.logger.error(`could not record the process group of run ${runId}: ${(err as Error).message}`);
        });
      },
      ended: async () => {
        if (pgid === null) return;
        await recorded;
        await this.repo.forgetGroup(companyId, runId, pgid).catch(() => undefined);
      },
    };
  }

  /**
   * Kills the recorded groups of this host's runs that no live instance runs: their owner process
   * is gone, or the owner is `instanceId` and the run is not among `localRunIds`. Returns how many
   * groups were still alive.
   */
  async killStale(instanceId: string, localRunIds: string[]): Promise<number> {
    const rows = await this.repo.groupsOnHost(thisHost(), localRunIds);
    const stale = rows.filter((r) => {
      if (!r.claimedBy) return true;
      if (r.claimedBy === instanceId) return !r.startedAt || Date.now() - new Date(r.startedAt).getTime() > LAUNCH_SLACK_MS;
      return isGoneLocalOwner(r.claimedBy, r.startedAt);
    });
    let killed = 0;
    await Promise.all(
      stale.map(async (r) => {
        const pgid = Number(r.processGroupId);
        const ticks = r.processStartTicks === null ? null : Number(r.processStartTicks);
        if (isRecordedGroup(pgid, ticks)) {
          killed++;
          const grace = Number(r.graceSec);
          this.logger.warn(`killing process group ${pgid} left by run ${r.id} (its instance ${r.claimedBy ?? '?'} is gone)`);
          await terminateGroup(pgid, (Number.isFinite(grace) && grace >= 0 ? grace : DEFAULT_GRACE_SEC) * 1000);
        }
        await this.repo.forgetGroup(r.companyId, r.id, pgid);
      }),
    );
    return killed;
  }
}
