import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { createCompany } from '../support/factories';
import {
  activityOf,
  describeWithoutCredentials,
  createProject,
  createWorkspace,
  freePort,
  insertAgentWithKey,
  isAlive,
} from '../support/projects';
import { createTestApp, TestApp } from '../support/test-app';
import { scratchDir } from '../support/heartbeat';

const SERVER = `require('http').createServer((q, s) => s.end('hello ' + process.env.GREETING + ' from ' + process.cwd())).listen(Number(process.env.PORT), '127.0.0.1')`;

async function serverConfig(extra: Record<string, unknown> = {}) {
  const port = await freePort();
  return {
    port,
    runtimeConfig: {
      command: process.execPath,
      args: ['-e', SERVER],
      env: { GREETING: 'world' },
      port,
      healthCheck: { path: '/', timeoutMs: 10_000 },
      stopTimeoutMs: 2000,
      ...extra,
    },
  };
}

async function waitDead(pid: number): Promise<boolean> {
  for (let i = 0; i < 50 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 50));
  return !isAlive(pid);
}

describe('workspace runtime services', () => {
  let t: TestApp;
  let cwd: string;
  beforeAll(async () => {
    t = await createTestApp();
    cwd = scratchDir('svc-runtime-'); // the service runs as the agent user when the tests run as root
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  const url = (p: { id: string }, w: { id: string }, action: string) =>
    `/api/projects/${p.id}/workspaces/${w.id}/runtime-services/${action}`;

  describe('POST /api/projects/:projectId/workspaces/:workspaceId/runtime-services/:action', () => {
    it('starts a real HTTP server in the workspace cwd, answers, then stops it', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const { port, runtimeConfig } = await serverConfig();
      const w = await createWorkspace(t, p.id, { cwd, runtimeConfig });

      const started = await t.http.post(url(p, w, 'start')).expect(200);
      const { workspace, operation } = started.body;
      expect(operation).toMatchObject({ action: 'start', status: 'succeeded', workspaceId: w.id, error: null });
      expect(operation.pid).toEqual(expect.any(Number));
      expect(Date.parse(operation.startedAt)).not.toBeNaN();
      expect(Date.parse(operation.finishedAt)).not.toBeNaN();
      expect(fs.existsSync(operation.logPath)).toBe(true);
      expect(workspace).toMatchObject({ id: w.id, desiredState: 'running' });
      expect(workspace.runtimeService).toMatchObject({ status: 'running', pid: operation.pid });

      const answer = await fetch(`http://127.0.0.1:${port}/`);
      expect(await answer.text()).toBe(`hello world from ${fs.realpathSync(cwd)}`);

      const again = await t.http.post(url(p, w, 'start')).expect(200);
      expect(again.body.operation.pid).toBe(operation.pid);

      const stopped = await t.http
        .post(url(p, w, 'stop'))
        .send({})
        .expect(200);
      expect(stopped.body.operation).toMatchObject({ action: 'stop', status: 'succeeded', pid: operation.pid });
      expect(stopped.body.workspace).toMatchObject({ desiredState: 'stopped', runtimeService: { status: 'stopped', pid: null } });
      expect(await waitDead(operation.pid)).toBe(true);
      await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();

      const actions = (await activityOf(t, c.id)).filter(
        (a) => a.entityType === 'project_workspace' && a.action.startsWith('project_workspace.runtime_'),
      );
      expect(actions.map((a) => a.action)).toEqual([
        'project_workspace.runtime_stop',
        'project_workspace.runtime_start',
        'project_workspace.runtime_start',
      ]);
    });

    it('restart replaces the process with a new one', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const { port, runtimeConfig } = await serverConfig();
      const w = await createWorkspace(t, p.id, { cwd, runtimeConfig });
      const first = (await t.http.post(url(p, w, 'start')).expect(200)).body.operation;
      const second = (await t.http.post(url(p, w, 'restart')).expect(200)).body;
      expect(second.operation).toMatchObject({ action: 'restart', status: 'succeeded' });
      expect(second.operation.pid).not.toBe(first.pid);
      expect(await waitDead(first.pid)).toBe(true);
      expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
      await t.http.post(url(p, w, 'stop')).expect(200);
    });

    it('stops the process of a deleted workspace', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const { runtimeConfig } = await serverConfig();
      const w = await createWorkspace(t, p.id, { cwd, runtimeConfig });
      const { pid } = (await t.http.post(url(p, w, 'start')).expect(200)).body.operation;
      await t.http.delete(`/api/projects/${p.id}/workspaces/${w.id}`).expect(200);
      expect(await waitDead(pid)).toBe(true);
    });

    it('records a failed operation when the command cannot start or never gets healthy', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const missing = await createWorkspace(t, p.id, { cwd, runtimeConfig: { command: 'definitely-not-a-command-xyz' } });
      const res = await t.http.post(url(p, missing, 'start')).expect(200);
      expect(res.body.operation).toMatchObject({ status: 'failed', pid: null });
      expect(res.body.operation.error).toMatch(/ENOENT/);
      expect(res.body.workspace).toMatchObject({ desiredState: 'running', runtimeService: { status: 'stopped', pid: null } });

      const port = await freePort();
      const exits = await createWorkspace(t, p.id, {
        cwd,
        runtimeConfig: { command: process.execPath, args: ['-e', 'process.exit(3)'], port, healthCheck: { path: '/', timeoutMs: 3000 } },
      });
      const exited = await t.http.post(url(p, exits, 'start')).expect(200);
      expect(exited.body.operation.status).toBe('failed');
      expect(exited.body.operation.error).toMatch(/exited/);
    });

    it("health checks ask only the workspace's own process on its port: another server there is never contacted (no oracle, issue 41)", async () => {
      // another service on loopback (another instance's API, say): the tenant names its port
      const asked: string[] = [];
      const foreign = http.createServer((q, s) => {
        asked.push(q.url ?? '');
        s.statusCode = q.url === '/api/instance/settings' ? 200 : 404;
        s.end('{}');
      });
      await new Promise<void>((r) => foreign.listen(0, '127.0.0.1', r));
      const port = (foreign.address() as { port: number }).port;
      try {
        const c = await createCompany(t);
        const p = await createProject(t, c.id);
        const w = await createWorkspace(t, p.id, {
          cwd,
          runtimeConfig: {
            command: process.execPath,
            args: ['-e', 'setInterval(() => {}, 1000)'],
            port,
            healthCheck: { path: '/api/instance/settings', timeoutMs: 1500 },
            stopTimeoutMs: 500,
          },
        });
        const res = await t.http.post(url(p, w, 'start')).expect(200);
        expect(res.body.operation.status).toBe('failed');
        expect(res.body.operation.error).toMatch(/not served by the workspace's process/);
        expect(res.body.operation.error).not.toMatch(/HTTP \d/);
        expect(asked).toEqual([]);
        await t.http.post(url(p, w, 'stop')).expect(200);
      } finally {
        await new Promise((r) => foreign.close(r));
      }
    });

    it("refuses a health check url other than the workspace's own port on loopback (422)", async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      for (const hcUrl of [
        'http://127.0.0.1:1/x',
        'http://10.0.0.1:4000/x',
        'https://127.0.0.1:4000/x',
        'http://user:pw@127.0.0.1:4000/',
      ]) {
        const res = await t.http
          .post(`/api/projects/${p.id}/workspaces`)
          .send({ cwd, runtimeConfig: { command: 'true', port: 4000, healthCheck: { url: hcUrl } } })
          .expect(422);
        expect(res.body.fields).toEqual([expect.objectContaining({ field: 'runtimeConfig.healthCheck.url' })]);
      }
      await t.http
        .post(`/api/projects/${p.id}/workspaces`)
        .send({ cwd, runtimeConfig: { command: 'true', port: 4000, healthCheck: { url: 'http://127.0.0.1:4000/health' } } })
        .expect(201);
    });

    it('refuses start and restart without cwd or runtime configuration (422); stop needs neither', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const repoOnly = await createWorkspace(t, p.id, {
        cwd: null,
        repoUrl: 'https://example.com/r.git',
        runtimeConfig: { command: 'node' },
      });
      const noConfig = await createWorkspace(t, p.id, { cwd });
      const missingDir = await createWorkspace(t, p.id, { cwd: path.join(cwd, 'missing'), runtimeConfig: { command: 'node' } });
      for (const action of ['start', 'restart']) {
        expect((await t.http.post(url(p, repoOnly, action)).expect(422)).body.code).toBe('runtime_not_configured');
        expect((await t.http.post(url(p, noConfig, action)).expect(422)).body.code).toBe('runtime_not_configured');
        expect((await t.http.post(url(p, missingDir, action)).expect(422)).body.code).toBe('cwd_not_found');
      }
      expect((await t.http.post(url(p, noConfig, 'stop')).expect(200)).body.workspace.desiredState).toBe('stopped');
      await t.http.post(url(p, noConfig, 'reboot')).expect(400);
    });

    it('is board-only and checks the project and workspace', async () => {
      const c = await createCompany(t);
      const p = await createProject(t, c.id);
      const w = await createWorkspace(t, p.id, { cwd });
      const agent = await insertAgentWithKey(t, c.id);
      await t.http
        .post(url(p, w, 'start'))
        .set(agent.auth)
        .expect(403);
      const other = await createProject(t, c.id);
      await t.http.post(url(other, w, 'stop')).expect(404);
      await t.http.post(url({ id: '00000000-0000-4000-8000-000000000000' }, w, 'stop')).expect(404);
    });
  });

  describe('shutdown and start-up reconciliation', () => {
    it('stops processes on shutdown and restarts them on the next start-up of the owning instance', async () => {
      const env = { SERVICE_INSTANCE_ID: `inst-${Date.now()}` };
      const first = await createTestApp({ env });
      let second: TestApp | undefined;
      let other: TestApp | undefined;
      try {
        const c = (await first.http.post('/api/companies').send({ name: 'Reconcile Co' }).expect(201)).body;
        const p = (await first.http.post(`/api/companies/${c.id}/projects`).send({ name: 'svc' }).expect(201)).body;
        const { port, runtimeConfig } = await serverConfig();
        const w = (await first.http.post(`/api/projects/${p.id}/workspaces`).send({ cwd, runtimeConfig }).expect(201)).body;
        const { pid } = (await first.http.post(url(p, w, 'start')).expect(200)).body.operation;
        expect((await first.http.get(`/api/projects/${p.id}/workspaces`).expect(200)).body[0].runtimeService.ownerInstanceId).toBe(
          env.SERVICE_INSTANCE_ID,
        );
        await first.close();
        expect(await waitDead(pid)).toBe(true);

        // another instance on the same database leaves the process alone
        other = await createTestApp({ databaseUrl: first.databaseUrl, env: { SERVICE_INSTANCE_ID: 'someone-else' } });
        await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
        await other.close();
        other = undefined;

        second = await createTestApp({ databaseUrl: first.databaseUrl, env });
        expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
        const ws = (await second.http.get(`/api/projects/${p.id}/workspaces`).expect(200)).body[0];
        expect(ws).toMatchObject({ desiredState: 'running', runtimeService: { status: 'running' } });
        expect(ws.runtimeService.pid).not.toBe(pid);
        const ops = await second.dataSource.query(
          `SELECT action, status FROM runtime_service_operations WHERE workspace_id = $1 ORDER BY created_at`,
          [w.id],
        );
        expect(ops).toEqual([
          { action: 'start', status: 'succeeded' },
          { action: 'reconcile', status: 'succeeded' },
        ]);
        const newPid = ws.runtimeService.pid;
        await second.close();
        second = undefined;
        expect(await waitDead(newPid)).toBe(true);
      } finally {
        await other?.close();
        await second?.close();
      }
    });
  });

  describeWithoutCredentials([['post', `/api/projects/${randomUUID()}/workspaces/${randomUUID()}/runtime-services/start`]]);
});
