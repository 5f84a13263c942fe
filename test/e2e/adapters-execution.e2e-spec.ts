import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  FIXTURES,
  insertAgent,
  insertAgentKey,
  probeConfig,
  startServer,
  startWsServer,
  TERMINAL,
  TestServer,
  useHeartbeatApp,
  waitFor,
  waitRun,
  wakeRun,
} from '../support/heartbeat';
import type { TestApp } from '../support/test-app';

const probe = (file: string) => probeConfig(file, 'sleep');

describe('adapter execution', () => {
  const f = useHeartbeatApp();
  let t: TestApp;
  let companyId: string;
  let tmp: string;
  beforeAll(() => {
    ({ t, companyId, tmp } = f);
  });

  describe('http adapter, sync mode', () => {
    let server: TestServer;
    afterEach(() => server?.close());

    it('POSTs the wake payload and succeeds on 2xx, keeping usage and summary', async () => {
      server = await startServer((_req, res) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ summary: 'did the thing', usage: { inputTokens: 10 }, costCents: 3 }));
      });
      const agent = await insertAgent(t, companyId, {
        adapterType: 'http',
        adapterConfig: { url: `${server.url}/hook`, headers: { 'x-extra': 'yes' } },
      });
      const runId = await wakeRun(t, agent.id, {
        source: 'on_demand',
        reason: 'hello',
        payload: { issueId: '66666666-6666-4666-8666-666666666666' },
      });
      const row = await waitRun(t, runId, TERMINAL);
      expect(row).toMatchObject({
        status: 'succeeded',
        usage_json: { inputTokens: 10, costCents: 3 },
        result_json: { summary: 'did the thing' },
      });
      const [req] = server.requests;
      expect(req.method).toBe('POST');
      expect(req.url).toBe('/hook');
      expect(req.headers['x-extra']).toBe('yes');
      expect(req.body).toMatchObject({ agentId: agent.id, runId, companyId, apiUrl: t.baseUrl, runToken: expect.stringMatching(/^eyJ/) });
      expect(req.body.context).toMatchObject({ reason: 'hello', issueId: '66666666-6666-4666-8666-666666666666' });
    });

    it('fails on a non-2xx answer (adapter_http_status) and on an unreachable url', async () => {
      server = await startServer((_req, res) => {
        res.statusCode = 500;
        res.end('boom');
      });
      const bad = await insertAgent(t, companyId, { adapterType: 'http', adapterConfig: { url: server.url } });
      expect(await waitRun(t, await wakeRun(t, bad.id), TERMINAL)).toMatchObject({ status: 'failed', error_code: 'adapter_http_status' });
      const gone = await insertAgent(t, companyId, { adapterType: 'http', adapterConfig: { url: 'http://127.0.0.1:9/none' } });
      expect(await waitRun(t, await wakeRun(t, gone.id), TERMINAL)).toMatchObject({
        status: 'failed',
        error_code: 'adapter_http_unreachable',
      });
    });

    it('times out a slow remote (timed_out)', async () => {
      server = await startServer(() => undefined); // never answers
      const agent = await insertAgent(t, companyId, { adapterType: 'http', adapterConfig: { url: server.url, timeoutSec: 1 } });
      expect(await waitRun(t, await wakeRun(t, agent.id), TERMINAL, 5000)).toMatchObject({ status: 'timed_out', error_code: 'timeout' });
    });
  });

  describe('http adapter, async mode and POST /api/heartbeat-runs/:runId/complete', () => {
    let server: TestServer;
    afterEach(() => server?.close());

    it('stays running after 202 until the remote completes it with the run token', async () => {
      server = await startServer((_req, res) => {
        res.statusCode = 202;
        res.end();
      });
      const agent = await insertAgent(t, companyId, { adapterType: 'http', adapterConfig: { url: server.url, mode: 'async' } });
      const runId = await wakeRun(t, agent.id);
      await waitFor(async () => server.requests.length > 0, 'remote called');
      await new Promise((r) => setTimeout(r, 200));
      expect((await waitRun(t, runId, ['running'])).status).toBe('running');
      const { runToken } = server.requests[0].body;
      // another run's header with this token: 422
      await t.http
        .post(`/api/heartbeat-runs/${runId}/complete`)
        .set('Authorization', `Bearer ${runToken}`)
        .set('X-Service-Run-Id', '00000000-0000-4000-8000-000000000000')
        .send({})
        .expect(422);
      // the board cannot complete a run
      await t.http.post(`/api/heartbeat-runs/${runId}/complete`).send({}).expect(403);
      await t.http
        .post(`/api/heartbeat-runs/${runId}/complete`)
        .set('Authorization', `Bearer ${runToken}`)
        .send({ status: 'bogus' })
        .expect(400);
      const done = await t.http
        .post(`/api/heartbeat-runs/${runId}/complete`)
        .set('Authorization', `Bearer ${runToken}`)
        .send({ status: 'succeeded', summary: 'async done', usage: { outputTokens: 7 } })
        .expect(200);
      expect(done.body).toMatchObject({ status: 'succeeded', resultJson: { summary: 'async done' }, usageJson: { outputTokens: 7 } });
      // the token died with the run
      await t.http.post(`/api/heartbeat-runs/${runId}/complete`).set('Authorization', `Bearer ${runToken}`).send({}).expect(401);
    });

    it('an agent API key of another run cannot complete it (403); the run times out without a callback', async () => {
      server = await startServer((_req, res) => res.end('{}'));
      const agent = await insertAgent(t, companyId, {
        adapterType: 'http',
        adapterConfig: { url: server.url, mode: 'async', timeoutSec: 1 },
      });
      const key = await insertAgentKey(t, agent);
      const runId = await wakeRun(t, agent.id);
      await waitRun(t, runId, ['running']);
      await t.http.post(`/api/heartbeat-runs/${runId}/complete`).set('Authorization', `Bearer ${key}`).send({}).expect(403);
      expect(await waitRun(t, runId, TERMINAL, 5000)).toMatchObject({ status: 'timed_out' });
    });

    it('cancel abandons an async run and tells the remote at cancelUrl', async () => {
      server = await startServer((_req, res) => res.end('{}'));
      const agent = await insertAgent(t, companyId, {
        adapterType: 'http',
        adapterConfig: { url: server.url, mode: 'async', cancelUrl: `${server.url}/cancel` },
      });
      const runId = await wakeRun(t, agent.id);
      await waitRun(t, runId, ['running']);
      await waitFor(async () => server.requests.length > 0, 'remote called');
      await t.http.post(`/api/heartbeat-runs/${runId}/cancel`).expect(200);
      await waitFor(async () => server.requests.find((r) => r.url === '/cancel'), 'cancel notice', 3000);
    });
  });

  describe('run tokens', () => {
    it('are agent credentials only while the run is live; X-Service-Run-Id must match', async () => {
      const out = path.join(tmp, 'token.json');
      const agent = await insertAgent(t, companyId, { adapterConfig: probe(out) });
      const runId = await wakeRun(t, agent.id);
      await waitFor(async () => fs.existsSync(out), 'probe env');
      const token = JSON.parse(fs.readFileSync(out, 'utf8')).env.SERVICE_API_KEY as string;
      const auth = { Authorization: `Bearer ${token}` };
      await t.http.get(`/api/heartbeat-runs/${runId}`).set(auth).expect(200);
      await t.http.get(`/api/heartbeat-runs/${runId}`).set(auth).set('X-Service-Run-Id', runId).expect(200);
      await t.http
        .get(`/api/heartbeat-runs/${runId}`)
        .set(auth)
        .set('X-Service-Run-Id', '00000000-0000-4000-8000-000000000000')
        .expect(422);
      // board-only route: the token is an agent credential
      await t.http.get('/api/instance/settings/general').set(auth).expect(403);
      // a forged signature
      const [h, p] = token.split('.');
      await t.http.get(`/api/heartbeat-runs/${runId}`).set('Authorization', `Bearer ${h}.${p}.AAAA`).expect(401);
      await t.http.post(`/api/heartbeat-runs/${runId}/cancel`).expect(200);
      await t.http.get(`/api/heartbeat-runs/${runId}`).set(auth).expect(401);
    });

    it('an API key with X-Service-Run-Id must name a live run of that agent (422 otherwise)', async () => {
      const agent = await insertAgent(t, companyId, { adapterConfig: { command: 'sleep', args: ['60'] } });
      const key = await insertAgentKey(t, agent);
      const runId = await wakeRun(t, agent.id);
      await waitRun(t, runId, ['running']);
      await t.http.get(`/api/heartbeat-runs/${runId}`).set('Authorization', `Bearer ${key}`).set('X-Service-Run-Id', runId).expect(200);
      await t.http.post(`/api/heartbeat-runs/${runId}/cancel`).expect(200);
      await t.http.get(`/api/heartbeat-runs/${runId}`).set('Authorization', `Bearer ${key}`).set('X-Service-Run-Id', runId).expect(422);
    });
  });

  describe('CLI runtimes', () => {
    it.each(['runtime_a_local', 'runtime_f_local', 'runtime_g'])(
      '%s with a missing CLI fails at once with adapter_command_not_found',
      async (type) => {
        const agent = await insertAgent(t, companyId, { adapterType: type, adapterConfig: {} });
        const row = await waitRun(t, await wakeRun(t, agent.id), TERMINAL, 5000);
        expect(row).toMatchObject({ status: 'failed', error_code: 'adapter_command_not_found' });
      },
    );

    it('passes the prompt on stdin and parses JSON-lines usage (the final result line is the total, never added to per-message usage) and session id', async () => {
      const script = path.join(FIXTURES, 'fake-cli-runtime.js');
      const agent = await insertAgent(t, companyId, {
        adapterType: 'runtime_b_local',
        adapterConfig: { command: process.execPath, modelArg: '', args: [script], instructions: 'Be brief.', model: 'm-1' },
      });
      const runId = await wakeRun(t, agent.id, { source: 'on_demand', reason: 'cli-test' });
      const row = await waitRun(t, runId, TERMINAL);
      expect(row).toMatchObject({
        status: 'succeeded',
        usage_json: { input_tokens: 3, output_tokens: 5 },
        result_json: { sessionId: 'sess-1' },
      });
      expect(row.result_json.summary).toContain('Be brief.');
      expect(row.result_json.summary).toContain('Reason: cli-test');
    });

    it('resumes the last session with resumeArg unless the wake forces a fresh session', async () => {
      const agent = await insertAgent(t, companyId, {
        adapterType: 'runtime_c_local',
        // the fixture is executable (#!/usr/bin/env node), so flags come straight after the command
        adapterConfig: { command: path.join(FIXTURES, 'fake-cli-runtime.js'), modelArg: '', resumeArg: '--resume' },
      });
      const summary = async (body: Record<string, unknown>) =>
        (await waitRun(t, await wakeRun(t, agent.id, body), TERMINAL)).result_json.summary as string;
      expect(await summary({})).toMatch(/ARGS:$/);
      expect(await summary({})).toMatch(/ARGS:--resume sess-1$/);
      expect(await summary({ forceFreshSession: true })).not.toContain('--resume');
    });

    it('an unknown adapter type fails the run with adapter_not_found', async () => {
      const agent = await insertAgent(t, companyId, { adapterType: 'external_thing', adapterConfig: {} });
      expect(await waitRun(t, await wakeRun(t, agent.id), TERMINAL)).toMatchObject({ status: 'failed', error_code: 'adapter_not_found' });
    });

    it('injects bound secrets into the process env, follows rotation for latest, keeps pins, and redacts values from the log', async () => {
      const plain = `s3cret-${Date.now()}-value`;
      const secretId = (
        await t.http
          .post(`/api/companies/${companyId}/secrets`)
          .send({ name: `TOKEN_${Date.now()}`, value: plain })
          .expect(201)
      ).body.id;
      await t.http
        .post(`/api/secrets/${secretId}/rotate`)
        .send({ value: `${plain}-v2` })
        .expect(200);
      const script =
        "const h=(v)=>require('crypto').createHash('sha256').update(v).digest('hex');" +
        "console.log('LATEST='+h(process.env.LATEST));console.log('PINNED='+h(process.env.PINNED));console.log('echo '+process.env.PINNED)";
      const agent = await insertAgent(t, companyId, {
        adapterConfig: {
          command: process.execPath,
          args: ['-e', script],
          env: { LATEST: { type: 'secret_ref', secretId, version: 'latest' }, PINNED: { type: 'secret_ref', secretId, version: 1 } },
        },
      });
      const runId = await wakeRun(t, agent.id);
      expect(await waitRun(t, runId, TERMINAL)).toMatchObject({ status: 'succeeded' });
      const sha = (v: string) => require('node:crypto').createHash('sha256').update(v).digest('hex');
      const log = (await t.http.get(`/api/heartbeat-runs/${runId}/log?limitBytes=1048576`).expect(200)).body.content as string;
      expect(log).toContain(`LATEST=${sha(`${plain}-v2`)}`);
      expect(log).toContain(`PINNED=${sha(plain)}`);
      expect(log).not.toContain(plain);
    });

    it('a secret reference to a missing secret fails the run before the process starts (secret_not_found)', async () => {
      const agent = await insertAgent(t, companyId, {
        adapterConfig: { command: 'true', env: { TOKEN: { type: 'secret_ref', secretId: '77777777-7777-4777-8777-777777777777' } } },
      });
      expect(await waitRun(t, await wakeRun(t, agent.id), TERMINAL)).toMatchObject({ status: 'failed', error_code: 'secret_not_found' });
    });
  });

  describe('gateway_a adapter (WebSocket)', () => {
    let server: TestServer & { received: string[] };
    afterEach(() => server?.close());

    it('sends the wake, logs the messages and succeeds on a completion message', async () => {
      server = await startWsServer((text, send) => {
        const wakeMsg = JSON.parse(text);
        if (wakeMsg.type !== 'wake') return;
        send(JSON.stringify({ type: 'progress', note: 'x'.repeat(70000) }));
        send(JSON.stringify({ type: 'completed', summary: `handled ${wakeMsg.runId}`, usage: { tokens: 4 } }));
      });
      const agent = await insertAgent(t, companyId, { adapterType: 'gateway_a', adapterConfig: { url: `${server.url}/gw` } });
      const runId = await wakeRun(t, agent.id, { source: 'on_demand', reason: 'gw' });
      const row = await waitRun(t, runId, TERMINAL);
      expect(row).toMatchObject({ status: 'succeeded', result_json: { summary: `handled ${runId}` }, usage_json: { tokens: 4 } });
      const wakeMsg = JSON.parse(server.received[0]);
      expect(wakeMsg).toMatchObject({
        type: 'wake',
        runId,
        agentId: agent.id,
        companyId,
        runToken: expect.stringMatching(/^eyJ/),
        context: { reason: 'gw' },
      });
      const log = await t.http.get(`/api/heartbeat-runs/${runId}/log?limitBytes=1048576`).expect(200);
      expect(log.body.content).toContain('progress');
    });

    it('fails when the gateway closes without completing, and on a failed message', async () => {
      server = await startWsServer((_text, send, close) => {
        if (server.received.length === 1) close();
        else send(JSON.stringify({ type: 'failed', error: 'no capacity' }));
      });
      const agent = await insertAgent(t, companyId, { adapterType: 'gateway_a', adapterConfig: { url: server.url } });
      expect(await waitRun(t, await wakeRun(t, agent.id), TERMINAL)).toMatchObject({ status: 'failed', error_code: 'gateway_closed' });
      expect(await waitRun(t, await wakeRun(t, agent.id), TERMINAL)).toMatchObject({
        status: 'failed',
        error_code: 'remote_reported_failure',
        error: 'no capacity',
      });
    });

    it('times out a silent gateway, and cancel tells the gateway', async () => {
      server = await startWsServer(() => undefined);
      const slow = await insertAgent(t, companyId, { adapterType: 'gateway_a', adapterConfig: { url: server.url, timeoutSec: 1 } });
      expect(await waitRun(t, await wakeRun(t, slow.id), TERMINAL, 5000)).toMatchObject({ status: 'timed_out' });
      const agent = await insertAgent(t, companyId, { adapterType: 'gateway_a', adapterConfig: { url: server.url } });
      const runId = await wakeRun(t, agent.id);
      await waitFor(async () => server.received.some((m) => JSON.parse(m).runId === runId), 'wake received');
      await t.http.post(`/api/heartbeat-runs/${runId}/cancel`).expect(200);
      await waitFor(
        async () => server.received.some((m) => JSON.parse(m).type === 'cancel' && JSON.parse(m).runId === runId),
        'cancel message',
        3000,
      );
    });

    it('fails with gateway_unreachable when nothing listens', async () => {
      const agent = await insertAgent(t, companyId, { adapterType: 'gateway_a', adapterConfig: { url: 'ws://127.0.0.1:9/none' } });
      expect(await waitRun(t, await wakeRun(t, agent.id), TERMINAL)).toMatchObject({ status: 'failed', error_code: 'gateway_unreachable' });
    });
  });
});
