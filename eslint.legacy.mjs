// Files that still hold SQL outside a repository (before the one-owner-per-table rule).
// Each entry is a debt: move its statements into its module's <domain>.repository.ts and drop the line.
// New files never go here: lint refuses `.query(` outside repositories and src/database/.
export const LEGACY_SQL_FILES = [
  'src/modules/heartbeat/agent-wakeup.service.ts',
  'src/modules/heartbeat/heartbeat-runs.service.ts',
  'src/modules/heartbeat/heartbeat-scheduler.service.ts',
  'src/modules/heartbeat/run-dispatcher.service.ts',
  'src/modules/heartbeat/run-executor.service.ts',
  'src/modules/heartbeat/run-lifecycle.service.ts',
  'src/modules/heartbeat/run-store.ts',
  'src/modules/heartbeat/run-token.resolver.ts',
  'src/modules/heartbeat/wakeup-queue.service.ts',
];

// Domain modules still declared @Global (their consumers do not import them yet).
export const LEGACY_GLOBAL_MODULES = ['src/modules/adapters/adapters.module.ts'];
