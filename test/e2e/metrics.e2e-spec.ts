import type { Pool } from 'pg';
import { metricsAccess } from '../../src/modules/metrics/metrics-access';
import { MetricsService } from '../../src/modules/metrics/metrics.service';
import { createCompany } from '../support/factories';
import { insertAgent, waitRun, wakeRun } from '../support/heartbeat';
import { createTestApp, TestApp } from '../support/test-app';

/** The value of one series (`name{labels}`) in a Prometheus text body, 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{([^}]*)\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[4]);
  }
  return 0;
}

describe('GET /api/metrics', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ listen: true });
  });
  afterAll(() => t.close());

  it('serves the named series in the Prometheus text format to loopback callers', async () => {
    const res = await t.http.get('/api/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    for (const name of [
      'http_requests_total',
      'http_request_duration_seconds',
      'heartbeat_runs',
      'heartbeat_wakeups',
      'heartbeat_wake_to_start_seconds',
      'heartbeat_run_duration_seconds',
      'budget_incidents',
      'db_pool_connections',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect(res.text).toContain(`# TYPE ${name} `);
    }
    expect(res.text).toMatch(/db_pool_connections\{state="in_use"\} \d+/);
  });

  it('db_pool_connections{state="waiting"} reads 0 on an idle instance (the scrape’s own queries are not waiting)', async () => {
    for (let i = 0; i < 5; i++) {
      const text = (await t.http.get('/api/metrics').expect(200)).text;
      expect(sample(text, 'db_pool_connections', { state: 'waiting' })).toBe(0);
      const [total, idle, inUse] = ['total', 'idle', 'in_use'].map((state) => sample(text, 'db_pool_connections', { state }));
      expect(idle + inUse).toBe(total);
    }
  });

  it('db_pool_connections{state="waiting"} counts the checkouts waiting while every connection is in use', async () => {
    const pool = (t.dataSource.driver as unknown as { master: Pool }).master;
    const max = (pool as unknown as { options: { max: number } }).options.max;
    const held = await Promise.all(Array.from({ length: max }, () => pool.connect()));
    try {
      const queued = [pool.query('SELECT 1'), pool.query('SELECT 2')];
      // the gauge alone: the whole scrape would wait for a connection too
      const gauge = (await t.app.get(MetricsService).registry.getSingleMetric('db_pool_connections')!.get()).values;
      const value = (state: string) => gauge.find((v) => v.labels.state === state)?.value;
      expect({ total: value('total'), inUse: value('in_use') }).toEqual({ total: max, inUse: max });
      // the two queued here (and a scheduler tick's, if one fell in this moment)
      expect(value('waiting')).toBeGreaterThanOrEqual(2);
      for (const c of held.splice(0)) c.release();
      await Promise.all(queued);
    } finally {
      for (const c of held) c.release();
    }
  });

  it('labels requests by route template, not by raw path', async () => {
    const company = await createCompany(t);
    await t.http.get(`/api/companies/${company.id}`).expect(200);
    await t.http.get(`/api/companies/00000000-0000-4000-8000-000000000000`).expect(404);
    const text = (await t.http.get('/api/metrics').expect(200)).text;
    expect(
      sample(text, 'http_requests_total', { method: 'GET', route: '/api/companies/:companyId', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, 'http_requests_total', { method: 'GET', route: '/api/companies/:companyId', status: '404' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, 'http_request_duration_seconds_count', { method: 'GET', route: '/api/companies/:companyId', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(company.id);
  });

  it('changes after a run: runs by status, wake-to-start and duration histograms', async () => {
    const before = (await t.http.get('/api/metrics').expect(200)).text;
    const company = await createCompany(t);
    const agent = await insertAgent(t, company.id, { adapterType: 'process', adapterConfig: { command: 'true' } });
    const runId = await wakeRun(t, agent.id);
    await waitRun(t, runId, ['succeeded']);
    // the duration is observed after the ending transaction commits
    let after = '';
    for (let i = 0; i < 50; i++) {
      after = (await t.http.get('/api/metrics').expect(200)).text;
      if (
        sample(after, 'heartbeat_run_duration_seconds_count', { status: 'succeeded' }) >
        sample(before, 'heartbeat_run_duration_seconds_count', { status: 'succeeded' })
      )
        break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(sample(after, 'heartbeat_runs', { status: 'succeeded' })).toBe(sample(before, 'heartbeat_runs', { status: 'succeeded' }) + 1);
    expect(sample(after, 'heartbeat_run_duration_seconds_count', { status: 'succeeded' })).toBe(
      sample(before, 'heartbeat_run_duration_seconds_count', { status: 'succeeded' }) + 1,
    );
    expect(sample(after, 'heartbeat_wake_to_start_seconds_count', { adapter_type: 'process' })).toBe(
      sample(before, 'heartbeat_wake_to_start_seconds_count', { adapter_type: 'process' }) + 1,
    );
  });

  it('counts queued wakeups and budget incidents from the database', async () => {
    const company = await createCompany(t);
    const agent = await insertAgent(t, company.id, { adapterType: 'process', adapterConfig: { command: 'true' } });
    const before = (await t.http.get('/api/metrics').expect(200)).text;
    await t.dataSource.query(
      `INSERT INTO agent_wakeup_requests (company_id, agent_id, source, status) VALUES ($1, $2, 'on_demand', 'queued')`,
      [company.id, agent.id],
    );
    const [policy] = await t.dataSource
      .query(
        `INSERT INTO budget_policies (company_id, scope_type, scope_id, metric, window_kind, amount) VALUES ($1, 'company', $1, 'billed_cents', 'calendar_month_utc', 100) RETURNING id`,
        [company.id],
      )
      .catch(async () => t.dataSource.query(`SELECT id FROM budget_policies WHERE company_id = $1 LIMIT 1`, [company.id]));
    await t.dataSource.query(
      `INSERT INTO budget_incidents (company_id, policy_id, scope_type, scope_id, metric, window_kind, window_start, kind, budget_amount, threshold_amount, observed_amount)
       VALUES ($1, $2, 'company', $1, 'billed_cents', 'calendar_month_utc', now(), 'hard', 100, 100, 150)`,
      [company.id, policy.id],
    );
    const after = (await t.http.get('/api/metrics').expect(200)).text;
    expect(sample(after, 'heartbeat_wakeups', { status: 'queued' })).toBe(sample(before, 'heartbeat_wakeups', { status: 'queued' }) + 1);
    expect(sample(after, 'budget_incidents', { kind: 'hard', status: 'open' })).toBe(
      sample(before, 'budget_incidents', { kind: 'hard', status: 'open' }) + 1,
    );
  });
});

describe('GET /api/metrics with SERVICE_METRICS_TOKEN', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SERVICE_METRICS_TOKEN: 'scrape-secret-123' } });
  });
  afterAll(() => t.close());

  it('refuses a missing or wrong token with 401 and serves the right one', async () => {
    expect((await t.http.get('/api/metrics').expect(401)).body.code).toBe('metrics_token_required');
    await t.http.get('/api/metrics').set('Authorization', 'Bearer wrong').expect(401);
    const res = await t.http.get('/api/metrics').set('Authorization', 'Bearer scrape-secret-123').expect(200);
    expect(res.text).toContain('http_requests_total');
  });
});

describe('metrics access rule', () => {
  it('serves loopback only without a token, unless remote scraping is allowed', () => {
    expect(metricsAccess({ allowRemote: false }, '127.0.0.1', undefined)).toBe('loopback');
    expect(metricsAccess({ allowRemote: false }, '::1', undefined)).toBe('loopback');
    expect(metricsAccess({ allowRemote: false }, '::ffff:127.0.0.1', undefined)).toBe('loopback');
    expect(metricsAccess({ allowRemote: false }, '10.1.2.3', undefined)).toBe('remote_refused');
    expect(metricsAccess({ allowRemote: true }, '10.1.2.3', undefined)).toBe('ok');
    expect(metricsAccess({ token: 'x', allowRemote: false }, '127.0.0.1', undefined)).toBe('token_required');
    expect(metricsAccess({ token: 'x', allowRemote: false }, '10.1.2.3', 'Bearer x')).toBe('ok');
  });
});

describe('GET /api/health/live and /api/health/ready', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('live answers without the database; ready checks it', async () => {
    expect((await t.http.get('/api/health/live').expect(200)).body.status).toBe('ok');
    const ready = await t.http.get('/api/health/ready').expect(200);
    expect(ready.body).toEqual({ status: 'ready', databaseReachable: true, migrating: false, pendingMigrations: false });
  });

  it('is not ready while a migration runs (the migration lock is held)', async () => {
    const qr = t.dataSource.createQueryRunner();
    await qr.connect();
    try {
      await qr.query('SELECT pg_advisory_lock(7214001)');
      const res = await t.http.get('/api/health/ready').expect(503);
      expect(res.body).toMatchObject({ status: 'not_ready', migrating: true });
      expect((await t.http.get('/api/health/live').expect(200)).body.status).toBe('ok');
    } finally {
      await qr.query('SELECT pg_advisory_unlock(7214001)');
      await qr.release();
    }
    await t.http.get('/api/health/ready').expect(200);
  });

  it('is not ready when the database is unreachable', async () => {
    // terminate every connection of this database and refuse new ones
    const db = new URL(t.databaseUrl).pathname.slice(1);
    const admin = new (require('pg').Client)({ connectionString: process.env.TEST_PG_ADMIN_URL });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${db} WITH ALLOW_CONNECTIONS false`);
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [db]);
      const res = await t.http.get('/api/health/ready').expect(503);
      expect(res.body).toMatchObject({ status: 'not_ready', databaseReachable: false });
      await t.http.get('/api/health/live').expect(200);
    } finally {
      await admin.query(`ALTER DATABASE ${db} WITH ALLOW_CONNECTIONS true`);
      await admin.end();
    }
  });
});
