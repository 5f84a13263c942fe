import type { Actor } from '../../common/auth/actor';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { RunRecord } from './heartbeat.types';

/** Statuses in which an agent may not run; a wake of such an agent is refused (route) or skipped. */
export const NOT_RUNNABLE_AGENT_STATUSES = ['paused', 'terminated', 'pending_approval'];

/** One activity record about a run (system actor unless given). */
export function recordRunActivity(
  recorder: ActivityRecorder,
  action: string,
  run: Pick<RunRecord, 'id' | 'companyId' | 'agentId'>,
  details: Record<string, unknown>,
  actor?: Actor,
) {
  return recorder.record({
    companyId: run.companyId,
    action,
    entityType: 'heartbeat_run',
    entityId: run.id,
    actor,
    agentId: run.agentId,
    runId: run.id,
    details,
  });
}
