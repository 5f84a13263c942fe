import type { Command } from 'commander';
import { ApiClient } from '../api-client';
import { action, CliContext } from '../cli-context';

interface Health {
  status: string;
  version: string;
  deploymentMode: string;
  database: { reachable: boolean; latencyMs?: number };
}
interface Ready {
  status: string;
  pendingMigrations: boolean;
  migrating: boolean;
}
interface RunRef {
  id: string;
  status: string;
  claimedBy?: string | null;
}

const PAGE = 200;

/** All pages of a keyset-paged run list (X-Next-Cursor). */
async function allRuns(api: ApiClient, path: string): Promise<RunRef[]> {
  const out: RunRef[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 50; i++) {
    const page: { body: RunRef[]; headers: Headers } = await api.request<RunRef[]>(
      'GET',
      `${path}&limit=${PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    out.push(...page.body);
    cursor = page.headers.get('x-next-cursor');
    if (!cursor) break;
  }
  return out;
}

/**
 * `aos status`: the running service over its API: health and readiness, and per company the live
 * runs (running, queued: the queue depth) and the instances running them (the `claimedBy` of
 * running runs; an idle instance runs none and is not seen).
 */
export async function status(ctx: CliContext): Promise<number> {
  const api = new ApiClient(ctx);
  const health = (await api.request<Health>('GET', '/api/health', undefined, { allow: [503] })).body;
  const ready = (await api.request<Ready>('GET', '/api/health/ready', undefined, { allow: [503] })).body;
  const companies = await api.get<Array<{ id: string; name: string }>>('/api/companies');
  const instances = new Map<string, number>();
  const perCompany: Array<{ id: string; name: string; running: number; queued: number }> = [];
  for (const c of companies) {
    const running = await allRuns(api, `/api/companies/${c.id}/heartbeat-runs?status=running`);
    const queued = await allRuns(api, `/api/companies/${c.id}/heartbeat-runs?status=queued`);
    for (const r of running) if (r.claimedBy) instances.set(r.claimedBy, (instances.get(r.claimedBy) ?? 0) + 1);
    perCompany.push({ id: c.id, name: c.name, running: running.length, queued: queued.length });
  }
  const totals = perCompany.reduce((t, c) => ({ running: t.running + c.running, queued: t.queued + c.queued }), { running: 0, queued: 0 });
  const result = {
    url: api.baseUrl,
    status: health.status,
    ready: ready.status === 'ready',
    version: health.version,
    deploymentMode: health.deploymentMode,
    database: health.database,
    pendingMigrations: ready.pendingMigrations,
    instances: [...instances].map(([id, runningRuns]) => ({ id, runningRuns })),
    liveRuns: totals,
    queueDepth: totals.queued,
    companies: perCompany,
  };
  ctx.result(result, [
    `${api.baseUrl}: ${health.status}, ${ready.status} (version ${health.version}, ${health.deploymentMode}; database ${health.database.reachable ? `reachable, ${health.database.latencyMs} ms` : 'UNREACHABLE'})`,
    `live runs: ${totals.running} running, ${totals.queued} queued (queue depth ${totals.queued})`,
    `instances running them: ${result.instances.length ? result.instances.map((i) => `${i.id} (${i.runningRuns})`).join(', ') : 'none'}`,
    ...perCompany.map((c) => `  ${c.name} (${c.id}): ${c.running} running, ${c.queued} queued`),
  ]);
  return health.status === 'ok' && result.ready ? 0 : 1;
}

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description('the running service: health, readiness, live runs, queue depth and the instances running them')
    .action(action('status', status));
}
