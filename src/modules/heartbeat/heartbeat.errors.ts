import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the heartbeat area (wakeups, runs) may answer besides validation and access errors. */
export const HEARTBEAT_ERRORS = {
  agent_not_wakeable: 409,
  run_not_live: 409,
} as const satisfies ErrorTable;

export const heartbeatError = domainErrors(HEARTBEAT_ERRORS);
