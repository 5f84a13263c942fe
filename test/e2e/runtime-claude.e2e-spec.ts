import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createAgent } from '../support/agents';
import {
  claudeBinary,
  claudeEnv,
  FakeAnthropic,
  FakeRequest,
  FakeScript,
  FakeTurn,
  startFakeAnthropic,
  transcript,
} from '../support/fake-anthropic';
import { scratchDir, TERMINAL, waitFor, waitRun, wakeRun } from '../support/heartbeat';
import { AgentIdentities } from '../../src/common/process/agent-identities';
import { createSkill } from '../support/skills';
import { describeUsageFidelity, useRuntimeApp, type CallUsage } from '../support/runtimes';

const claudeUsage = (u: CallUsage) => ({ input: u.input, output: u.output, cacheRead: u.cached });

/**
 * claude_local with the real Claude Code CLI (pinned, from the test CLI cache) against a loopback fake of the
 * Anthropic Messages API: no network anywhere else (telemetry, updates and other traffic are off).
 */
describe('claude_local: the real Claude Code CLI', () => {
  let fake: FakeAnthropic;
  const claude = claudeBinary();
  const answer =
    (text: string, usage = { input: 1234, output: 56, cacheRead: 100, cacheCreation: 10 }): FakeScript =>
    () => ({ text, usage });
  const s = useRuntimeApp('claude_local', () => ({ command: claude, model: 'claude-sonnet-4-5', env: claudeEnv(fake) }));

  beforeAll(async () => {
    fake = await startFakeAnthropic(answer('hello'));
  });
  afterAll(async () => {
    await fake.close();
  });

  const claudeAgent = (adapterConfig: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => s.agent(adapterConfig, extra);
  const costEvents = (runId: string) => s.costEvents(runId);
  const agentHome = (agentId: string, companyId: string) =>
    new AgentIdentities(s.t.config.agentIdentity).forAgent(agentId, companyId)?.home ?? process.env.HOME!;
  const runLog = (runId: string) => s.runLog(runId);

  describe('the adapter type', () => {
    it('is listed by GET /api/adapters with its config schema (the board UI form fields)', async () => {
      const res = await s.t.http.get('/api/adapters').expect(200);
      const claudeType = res.body.find((a: { type: string }) => a.type === 'claude_local');
      expect(claudeType).toMatchObject({ builtIn: true, executable: true });
      for (const k of [
        'model',
        'cwd',
        'instructionsFilePath',
        'promptTemplate',
        'extraArgs',
        'maxTurnsPerRun',
        'timeoutSec',
        'graceSec',
        'dangerouslySkipPermissions',
        'effort',
        'env',
      ])
        expect(Object.keys(claudeType.configSchema.properties)).toContain(k);
      await s.t.http.get('/api/adapters/claude_local/config-schema').expect(200);
    });

    it('accepts an agent with the form’s fields and refuses a badly typed one (422 naming the field)', async () => {
      const a = await claudeAgent({
        extraArgs: ['--verbose'],
        maxTurnsPerRun: 5,
        dangerouslySkipPermissions: true,
        effort: 'high',
        graceSec: 5,
      });
      expect(a).toMatchObject({ adapterType: 'claude_local' });
      const bad = await s.t.http
        .post(`/api/companies/${s.companyId}/agents`)
        .send({ name: 'Bad', role: 'general', adapterType: 'claude_local', adapterConfig: { maxTurnsPerRun: 'many' } });
      expect(bad.status).toBe(422);
      expect(JSON.stringify(bad.body)).toContain('maxTurnsPerRun');
      const badCap = await s.t.http
        .post(`/api/companies/${s.companyId}/agents`)
        .send({ name: 'Bad cap', role: 'general', adapterType: 'claude_local', adapterConfig: {}, runtimeConfig: { maxCostCents: -1 } });
      expect(badCap.status).toBe(422);
      expect(badCap.body.field).toBe('runtimeConfig.maxCostCents');
    });
  });

  describe('runs', () => {
    it('books exactly the usage the model sent, once, with the CLI’s reported cost; the next wake resumes the session', async () => {
      fake.setScript(answer('first answer'));
      const agent = await claudeAgent();
      const before = { ...fake.sent };
      const runId = await wakeRun(s.t, agent.id);
      const run = await waitRun(s.t, runId, TERMINAL, 60_000);
      expect({ status: run.status, error: run.error }).toEqual({ status: 'succeeded', error: null });
      const sent = { input: fake.sent.input - before.input, output: fake.sent.output - before.output };
      expect(sent).toEqual({ input: 1234, output: 56 });
      expect(run.usage_json).toMatchObject({
        inputTokens: 1234,
        cachedInputTokens: 100,
        cacheCreationInputTokens: 10,
        outputTokens: 56,
        turns: 1,
        costStatus: 'reported',
        provider: 'anthropic',
        model: 'claude-sonnet-4-5',
        final: true,
      });
      expect(run.result_json).toMatchObject({ sessionId: expect.any(String), summary: 'first answer', sessionResumed: false });
      const costs = await costEvents(runId);
      expect(costs).toEqual([
        expect.objectContaining({
          provider: 'anthropic',
          biller: 'anthropic',
          model: 'claude-sonnet-4-5',
          cost_status: 'reported',
          cost_cents: Math.ceil(run.usage_json.costUsd * 100),
          input_tokens: '1244',
          cached_input_tokens: '100',
          output_tokens: '56',
        }),
      ]);
      expect(run.usage_json.costUsd).toBeGreaterThan(0);
      // the log (the board's transcript) keeps the CLI's messages, not its partial-message metering events
      const log = (await s.t.http.get(`/api/heartbeat-runs/${runId}/log`).expect(200)).body.content as string;
      const logged = log
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .filter((e) => e.stream === 'stdout')
        .flatMap((e) => (e.chunk as string).trim().split('\n'))
        .map((l) => JSON.parse(l).type);
      expect(logged).toEqual(expect.arrayContaining(['system', 'assistant', 'result']));
      expect(logged).not.toContain('stream_event');
      expect((await s.t.http.get(`/api/heartbeat-runs/${runId}`).expect(200)).body).toMatchObject({
        logStore: 'local_file',
        logRef: run.log_path,
      });

      // second wake: the CLI is given --resume and the model sees the first conversation
      fake.setScript(answer('second answer', { input: 2000, output: 20, cacheRead: 0, cacheCreation: 0 }));
      const firstRequests = fake.requests.length;
      const run2Id = await wakeRun(s.t, agent.id, { source: 'on_demand', reason: 'follow-up please' });
      const run2 = await waitRun(s.t, run2Id, TERMINAL, 60_000);
      expect(run2.status).toBe('succeeded');
      expect(run2.result_json).toMatchObject({ sessionId: run.result_json.sessionId, sessionResumed: true });
      const seen = transcript(fake.requests[fake.requests.length - 1]);
      expect(fake.requests.length).toBe(firstRequests + 1);
      expect(seen).toContain('first answer');
      expect(seen).toContain('follow-up please');
      // per run, not session-cumulative, and priced as the fresh run was (the CLI's own per-run cost)
      expect(run2.usage_json).toMatchObject({ inputTokens: 2000, outputTokens: 20, cachedInputTokens: 0, costStatus: 'reported' });
      expect((await costEvents(run2Id)).length).toBe(1);
      // the run was visible with its usage as a live event
      const events = await s.t.dataSource.query(
        `SELECT payload FROM live_events WHERE type = 'heartbeat.run.event' AND payload->>'runId' = $1 ORDER BY id`,
        [run2Id],
      );
      const usageEvents = events.filter((e: { payload: { eventType: string } }) => e.payload.eventType === 'usage');
      expect(usageEvents.length).toBeGreaterThan(0);
      expect(usageEvents[usageEvents.length - 1].payload.payload).toMatchObject({ turns: 1, inputTokens: 2000, outputTokens: 20 });
    });

    it('falls back to a fresh session by itself when the CLI’s session store lost the session', async () => {
      fake.setScript(answer('fresh start'));
      const agent = await claudeAgent();
      const first = await waitRun(s.t, await wakeRun(s.t, agent.id), TERMINAL, 60_000);
      expect(first.status).toBe('succeeded');
      const dead = first.result_json.sessionId as string;
      // the CLI's session store (in the agent's home) no longer has it
      const stored = execFileSync('find', [agentHome(agent.id, s.companyId), '-name', `${dead}.jsonl`])
        .toString()
        .trim()
        .split('\n')
        .filter(Boolean);
      expect(stored.length).toBeGreaterThan(0);
      stored.forEach((f) => fs.rmSync(f));
      const runId = await wakeRun(s.t, agent.id);
      const run = await waitRun(s.t, runId, TERMINAL, 60_000);
      expect(run.status).toBe('succeeded');
      expect(run.result_json.sessionId).not.toBe(dead);
      expect(run.result_json.sessionNote).toContain('unknown');
      // the fresh session's first request carries no earlier turns
      expect(transcript(fake.requests[fake.requests.length - 1])).not.toContain('fresh start');
      // and the next wake resumes the new session (three wakes, one fallback, no retry loop)
      const next = await waitRun(s.t, await wakeRun(s.t, agent.id), TERMINAL, 60_000);
      expect(next.result_json).toMatchObject({ sessionId: run.result_json.sessionId, sessionResumed: true });
    });

    it('never hands a session of another runtime to the CLI: after a switch of adapterType the next wake is fresh', async () => {
      fake.setScript(answer('from claude'));
      const agent = await createAgent(s.t, s.companyId, {
        adapterType: 'process',
        adapterConfig: {
          command: process.execPath,
          args: ['-e', 'console.log(JSON.stringify({type:"result",session_id:"ses_other_runtime",result:"x"}))'],
        },
      });
      const other = await waitRun(s.t, await wakeRun(s.t, agent.id), TERMINAL, 30_000);
      expect(other.status).toBe('succeeded');
      await s.t.http
        .patch(`/api/agents/${agent.id}`)
        .send({
          adapterType: 'claude_local',
          replaceAdapterConfig: true,
          adapterConfig: { command: claude, model: 'claude-sonnet-4-5', env: claudeEnv(fake) },
        })
        .expect(200);
      const run = await waitRun(s.t, await wakeRun(s.t, agent.id), TERMINAL, 60_000);
      expect(run.status).toBe('succeeded');
      expect(run.result_json).toMatchObject({ sessionResumed: false, sessionNote: 'no session to resume' });
      expect(await runLog(run.id)).not.toContain('ses_other_runtime');
    });

    it('ends a run whose model stream goes silent with a clear code (idle-output deadline), spend booked', async () => {
      fake.setScript(() => ({ stall: true, usage: { input: 700, output: 0 } }));
      const agent = await claudeAgent({ idleTimeoutSec: 2 });
      const run = await waitRun(s.t, await wakeRun(s.t, agent.id), TERMINAL, 60_000);
      expect(run).toMatchObject({ status: 'failed', error_code: 'runtime_idle_timeout' });
    });
  });

  describe('sessions follow what shapes them', () => {
    const sessionEvents = async (runId: string) =>
      (
        await s.t.dataSource.query(
          `SELECT payload FROM live_events WHERE type = 'heartbeat.run.event' AND payload->>'runId' = $1 AND payload->>'eventType' = 'session'`,
          [runId],
        )
      ).map((e: { payload: { message: string; payload: Record<string, unknown> } }) => e.payload);

    it('resumes while model, instructions, adapter and folder stay; a new model or new instructions start a fresh session, saying why', async () => {
      fake.setScript(answer('answer marker 4f2c'));
      const agent = await claudeAgent({ promptTemplate: 'Instructions v1 (marker 51aa).' });
      const wakeAndWait = async () => waitRun(s.t, await wakeRun(s.t, agent.id), TERMINAL, 60_000);
      const first = await wakeAndWait();
      expect(first.result_json).toMatchObject({
        sessionResumed: false,
        sessionShape: { adapterType: 'claude_local', model: 'claude-sonnet-4-5', instructions: expect.stringMatching(/^[0-9a-f]{16}$/) },
      });
      const same = await wakeAndWait();
      expect(same.result_json).toMatchObject({ sessionId: first.result_json.sessionId, sessionResumed: true });

      await s.t.http
        .patch(`/api/agents/${agent.id}`)
        .send({ adapterConfig: { model: 'claude-haiku-4-5' } })
        .expect(200);
      const newModel = await wakeAndWait();
      expect(newModel.status).toBe('succeeded');
      expect(newModel.result_json.sessionResumed).toBe(false);
      expect(newModel.result_json.sessionId).not.toBe(first.result_json.sessionId);
      expect(newModel.result_json.sessionNote).toContain('model changed');
      expect(await sessionEvents(newModel.id)).toEqual([
        expect.objectContaining({
          payload: expect.objectContaining({ fresh: true, changed: ['model'], previousSessionId: first.result_json.sessionId }),
        }),
      ]);
      // the fresh session's first request carries none of the old conversation
      expect(transcript(fake.requests[fake.requests.length - 1])).not.toContain('answer marker 4f2c');

      await s.t.http
        .patch(`/api/agents/${agent.id}`)
        .send({ adapterConfig: { promptTemplate: 'Instructions v2 (marker 51ab).' } })
        .expect(200);
      const newInstructions = await wakeAndWait();
      expect(newInstructions.result_json.sessionResumed).toBe(false);
      expect(newInstructions.result_json.sessionNote).toContain('instructions changed');
      expect(await sessionEvents(newInstructions.id)).toEqual([
        expect.objectContaining({
          payload: expect.objectContaining({ changed: ['instructions'], previousSessionId: newModel.result_json.sessionId }),
        }),
      ]);
      expect(JSON.stringify(fake.requests[fake.requests.length - 1].body.system)).toContain('marker 51ab');
    });

    it('tells a resumed session why it was woken: the comment’s text and author in the new turn', async () => {
      const agent = await claudeAgent();
      fake.setScript(answer('looked at it'));
      const issue = await s.t.http
        .post(`/api/companies/${s.companyId}/issues`)
        .send({
          title: 'Wake context 3b9f',
          description: 'Fix the parser (description marker 77d2).',
          status: 'todo',
          assigneeAgentId: agent.id,
        })
        .expect(201);
      // the assignment wakes the agent: a fresh session whose turn names the issue and its description
      const first = await waitFor(
        async () => (await s.t.dataSource.query(`SELECT id FROM heartbeat_runs WHERE agent_id = $1`, [agent.id]))[0],
        'the assignment run',
      );
      const run1 = await waitRun(s.t, first.id, TERMINAL, 60_000);
      expect(run1.status).toBe('succeeded');
      const firstTurn = transcript(fake.requests[fake.requests.length - 1]);
      expect(firstTurn).toContain('you were assigned this issue');
      expect(firstTurn).toContain('Wake context 3b9f');
      expect(firstTurn).toContain('description marker 77d2');

      const before = fake.requests.length;
      const long = `Please also cover the empty input (comment marker 9e41). ${'x'.repeat(2_500)}`;
      const comment = await s.t.http.post(`/api/issues/${issue.body.id}/comments`).send({ body: long }).expect(201);
      const second = await waitFor(
        async () => (await s.t.dataSource.query(`SELECT id FROM heartbeat_runs WHERE agent_id = $1 AND id <> $2`, [agent.id, run1.id]))[0],
        'the comment run',
      );
      const run2 = await waitRun(s.t, second.id, TERMINAL, 60_000);
      expect(run2.result_json).toMatchObject({ sessionId: run1.result_json.sessionId, sessionResumed: true });
      const turns = fake.requests.slice(before).map((r) => JSON.stringify(r.body.messages?.[r.body.messages.length - 1] ?? ''));
      const newTurn = turns[0];
      expect(newTurn).toContain('a comment was added to an issue assigned to you');
      expect(newTurn).toContain('comment marker 9e41');
      expect(newTurn).toContain('Comment by a board user');
      // long texts are cut, with where to read the rest
      expect(newTurn).toContain(`cut at 2000 of ${long.length} characters`);
      expect(newTurn).toContain(`GET /api/issues/${issue.body.id}/comments/${comment.body.id}`);
      expect(newTurn).not.toContain('x'.repeat(2_100));
    });
  });

  describe('an assigned issue, done through the API by the CLI’s Bash tool', () => {
    it('checks out the issue, comments and marks it done with curl and the run token; usage booked once against the issue', async () => {
      const agent = await claudeAgent();
      const issue = await s.t.http
        .post(`/api/companies/${s.companyId}/issues`)
        .send({ title: 'Real CLI work', status: 'todo', assigneeAgentId: agent.id })
        .expect(201);
      const issueId = issue.body.id as string;
      const api = (method: string, route: string, body?: string) =>
        `curl -sf -X ${method} "$SERVICE_API_URL${route}" -H "Authorization: Bearer $SERVICE_API_KEY" -H "X-Service-Run-Id: $SERVICE_RUN_ID"` +
        (body ? ` -H 'content-type: application/json' -d '${body}'` : '');
      const steps = [
        api('POST', '/api/issues/$SERVICE_TASK_ID/checkout', '{"agentId":"\'"$SERVICE_AGENT_ID"\'","expectedStatuses":["todo"]}'),
        api('POST', '/api/issues/$SERVICE_TASK_ID/comments', '{"body":"Done by the real CLI"}'),
        api('PATCH', '/api/issues/$SERVICE_TASK_ID', '{"status":"done"}'),
      ];
      const start = fake.requests.length;
      fake.setScript((_r, i) => {
        const step = i - start;
        if (step < steps.length)
          return {
            toolUse: { name: 'Bash', input: { command: steps[step], description: `step ${step}` } },
            usage: { input: 500 + step, output: 40 },
          };
        return { text: 'Issue handled.', usage: { input: 900, output: 12 } };
      });
      const before = { ...fake.sent };
      const runId = await wakeRun(s.t, agent.id, { source: 'assignment', triggerDetail: 'system', payload: { issueId } });
      const run = await waitRun(s.t, runId, TERMINAL, 90_000);
      expect({ status: run.status, error: run.error }).toEqual({ status: 'succeeded', error: null });
      expect((await s.t.http.get(`/api/issues/${issueId}`).expect(200)).body.status).toBe('done');
      const comments = await s.t.http.get(`/api/issues/${issueId}/comments`).expect(200);
      const list = Array.isArray(comments.body) ? comments.body : comments.body.items;
      expect(list.map((c: { body: string }) => c.body)).toContain('Done by the real CLI');
      // every tool result went back to the model: the curl calls succeeded
      expect(JSON.stringify(fake.requests[fake.requests.length - 1].body.messages)).toContain('Done by the real CLI');
      // what the fake sent for this run's four messages (the assignment's own wake may start a next
      // run at once, whose first message would already count in fake.sent: at least these went out)
      const sent = { input: 500 + 501 + 502 + 900, output: 40 * 3 + 12 };
      expect(fake.sent.messages - before.messages).toBeGreaterThanOrEqual(4);
      expect(fake.sent.input - before.input).toBeGreaterThanOrEqual(sent.input);
      expect(run.usage_json).toMatchObject({ inputTokens: sent.input, outputTokens: sent.output, turns: 4 });
      // the assignment's own wake may run the agent once more: let it finish before the next test
      await waitFor(
        async () =>
          !(await s.t.dataSource.query(`SELECT 1 FROM heartbeat_runs WHERE agent_id = $1 AND status IN ('queued','running')`, [agent.id]))
            .length,
        'no live run of the agent',
        60_000,
      );
      const costs = await costEvents(runId);
      expect(costs).toEqual([
        expect.objectContaining({
          issue_id: issueId,
          input_tokens: String(sent.input),
          output_tokens: String(sent.output),
          provider: 'anthropic',
        }),
      ]);
    });
  });

  describe('skills and instructions', () => {
    it('finds its skills in ~/.claude/skills during the run (removed after) and its instructions in the system prompt', async () => {
      const skill = await createSkill(s.t, s.companyId, { name: 'runtime-skill', markdown: '# Runtime skill\n\nmarker-5521\n' });
      const agent = await claudeAgent({ promptTemplate: 'Instructions marker 9d2e.' }, { desiredSkills: [skill.key] });
      const start = fake.requests.length;
      const ours = (r: FakeRequest) => JSON.stringify(r.body.system ?? '').includes('Instructions marker 9d2e.');
      fake.setScript((r) =>
        ours(r) && !transcript(r).includes('tool_result')
          ? {
              toolUse: { name: 'Bash', input: { command: `cat "$HOME/.claude/skills/${skill.slug}/SKILL.md"`, description: 'read skill' } },
              usage: { input: 10, output: 1 },
            }
          : { text: 'read it', usage: { input: 10, output: 1 } },
      );
      const run = await waitRun(s.t, await wakeRun(s.t, agent.id), TERMINAL, 60_000);
      expect(run.status).toBe('succeeded');
      const mine = fake.requests.slice(start).filter(ours);
      expect(mine.length).toBe(2);
      expect(transcript(mine[1])).toContain('marker-5521');
      expect(fs.existsSync(path.join(agentHome(agent.id, s.companyId), '.claude', 'skills', skill.slug))).toBe(false);
    });
  });

  describe('a home the agent prepared (issue 41)', () => {
    (process.getuid?.() === 0 ? it : it.skip)(
      'a link planted at ~/.claude/skills never makes the service write, remove or chown outside the home',
      async () => {
        const skill = await createSkill(s.t, s.companyId, { name: 'planted-link-skill', markdown: '# Planted\n' });
        const agent = await claudeAgent({}, { desiredSkills: [skill.key] });
        // what a previous run of the agent could have left: ~/.claude/skills -> a folder of root's
        const home = agentHome(agent.id, s.companyId);
        const { uid, gid } = fs.statSync(home);
        const rootDir = fs.mkdtempSync(path.join(os.tmpdir(), 'root-owned-'));
        fs.chmodSync(rootDir, 0o755);
        fs.mkdirSync(path.join(rootDir, skill.slug));
        fs.writeFileSync(path.join(rootDir, skill.slug, 'keep.txt'), 'root data');
        fs.mkdirSync(path.join(home, '.claude'), { recursive: true });
        fs.chownSync(path.join(home, '.claude'), uid, gid);
        fs.rmSync(path.join(home, '.claude', 'skills'), { recursive: true, force: true });
        fs.symlinkSync(rootDir, path.join(home, '.claude', 'skills'));
        fs.lchownSync(path.join(home, '.claude', 'skills'), uid, gid);
        fake.setScript(answer('ok'));
        const run = await waitRun(s.t, await wakeRun(s.t, agent.id), TERMINAL, 60_000);
        expect(run.status).toBe('succeeded');
        // root's folder: still root's, its content untouched, nothing delivered into it
        expect(fs.statSync(rootDir)).toMatchObject({ uid: 0, gid: 0 });
        expect(fs.readdirSync(rootDir)).toEqual([skill.slug]);
        expect(fs.readFileSync(path.join(rootDir, skill.slug, 'keep.txt'), 'utf8')).toBe('root data');
        expect(fs.existsSync(path.join(rootDir, skill.slug, 'SKILL.md'))).toBe(false);
        expect(await runLog(run.id)).toContain('not delivered');
        fs.rmSync(rootDir, { recursive: true, force: true });
        fs.rmSync(path.join(home, '.claude', 'skills'), { force: true });
      },
    );
  });

  describe('the instructions file', () => {
    it('is read as the agent’s user: a file the agent may read reaches the system prompt, a root-only one never does', async () => {
      const open = fs.mkdtempSync(path.join(os.tmpdir(), 'instr-open-'));
      fs.chmodSync(open, 0o755);
      fs.writeFileSync(path.join(open, 'AGENTS.md'), 'Readable instructions c4e1.', { mode: 0o644 });
      const closed = fs.mkdtempSync(path.join(os.tmpdir(), 'instr-closed-'));
      fs.writeFileSync(path.join(closed, 'secret.md'), 'Root-only text 77aa.', { mode: 0o600 });
      const start = fake.requests.length;
      fake.setScript(answer('ok'));
      const a = await claudeAgent({ instructionsFilePath: path.join(open, 'AGENTS.md') });
      expect((await waitRun(s.t, await wakeRun(s.t, a.id), TERMINAL, 60_000)).status).toBe('succeeded');
      expect(fake.requests.slice(start).some((r) => JSON.stringify(r.body.system).includes('Readable instructions c4e1.'))).toBe(true);
      if (process.getuid?.() === 0) {
        const b = await claudeAgent({ instructionsFilePath: path.join(closed, 'secret.md') });
        const run = await waitRun(s.t, await wakeRun(s.t, b.id), TERMINAL, 60_000);
        expect(run.status).toBe('succeeded');
        expect(JSON.stringify(fake.requests.slice(start))).not.toContain('Root-only text 77aa.');
        expect(await runLog(run.id)).toContain('not readable');
      }
      fs.rmSync(open, { recursive: true, force: true });
      fs.rmSync(closed, { recursive: true, force: true });
    });
  });

  describe('metered in flight, with caps', () => {
    // every turn a tool call and 33,334 input tokens of claude-sonnet-4-5 (10 cents at list price)
    const loop = (hold?: { turn: number; until: Promise<unknown> }): FakeScript => {
      const start = fake.requests.length;
      return (_r, i) => ({
        toolUse: { name: 'Bash', input: { command: 'true', description: 'loop' } },
        usage: { input: 33_334, output: 1 },
        hold: hold && i - start === hold.turn ? hold.until : undefined,
      });
    };

    it('shows the running totals on the run while it runs, and stops it at maxCostCents with its spend booked', async () => {
      let release: () => void = () => undefined;
      fake.setScript(loop({ turn: 2, until: new Promise<void>((r) => (release = r)) }));
      const agent = await claudeAgent({}, { runtimeConfig: { maxCostCents: 45 } });
      const runId = await wakeRun(s.t, agent.id);
      // while the model holds its third answer, the run is running and shows two turns of usage
      const live = await waitFor(
        async () => {
          const r = (await s.t.http.get(`/api/heartbeat-runs/${runId}`).expect(200)).body;
          return r.status === 'running' && r.usageJson?.turns >= 2 ? r : null;
        },
        'live usage on the running run',
        60_000,
      );
      expect(live.usageJson).toMatchObject({ final: false, costStatus: 'priced', inputTokens: 66_668 });
      release();
      const run = await waitRun(s.t, runId, TERMINAL, 60_000);
      expect(run).toMatchObject({ status: 'cancelled', error_code: 'cap_max_cost_cents' });
      expect(run.error).toContain('maxCostCents 45');
      expect(run.usage_json.costCents).toBeGreaterThan(45);
      const [cost] = await costEvents(runId);
      expect(cost.cost_cents).toBe(run.usage_json.costCents);
      expect(Number(cost.input_tokens)).toBe(run.usage_json.inputTokens);
    });
  });

  // tolerance: the call in flight when the run is stopped (its input is booked from message_start)
  describeUsageFidelity(s, () => ({
    served: () => fake.served,
    markers: fake.markers,
    origin: fake.url,
    tool: (command, u): FakeTurn => ({ toolUse: { name: 'Bash', input: { command, description: 'step' } }, usage: claudeUsage(u) }),
    text: (text, u): FakeTurn => ({ text, usage: claudeUsage(u) }),
    held: (until, turn) => ({ ...(turn as FakeTurn), hold: until }),
    route: (scripts) => fake.setScript((r) => scripts.turn(r.body) as FakeTurn),
  }));

  describe('cents that add up', () => {
    it('100 small runs: each keeps its priced cost to the sub-cent, and the booked cents stay within 1 of the priced total', async () => {
      // a stand-in printing what Claude Code prints for one call of claude-sonnet-4-5 (no cost: priced from the table)
      const dir = scratchDir('claude-small-');
      const bin = path.join(dir, 'claude');
      const line = (o: unknown) => `echo '${JSON.stringify(o)}'`;
      fs.writeFileSync(
        bin,
        [
          '#!/bin/sh',
          'cat >/dev/null',
          line({ type: 'system', subtype: 'init', session_id: 'small-session', model: 'claude-sonnet-4-5' }),
          line({
            type: 'stream_event',
            event: {
              type: 'message_start',
              message: { id: 'msg_small', model: 'claude-sonnet-4-5', usage: { input_tokens: 1234, output_tokens: 1 } },
            },
            session_id: 'small-session',
          }),
          line({ type: 'stream_event', event: { type: 'message_delta', usage: { output_tokens: 56 } }, api_message_id: 'msg_small' }),
          line({
            type: 'result',
            subtype: 'success',
            is_error: false,
            num_turns: 1,
            result: 'ok',
            session_id: 'small-session',
            usage: { input_tokens: 1234, output_tokens: 56 },
          }),
        ].join('\n') + '\n',
        { mode: 0o755 },
      );
      const agent = await claudeAgent({ command: bin });
      const runs: Array<Record<string, any>> = [];
      for (let i = 0; i < 100; i++) runs.push(await waitRun(s.t, await wakeRun(s.t, agent.id), TERMINAL, 30_000));
      // claude-sonnet-4-5 at $3/M input and $15/M output: 0.4542 cents a run
      expect(
        runs.every((r) => r.status === 'succeeded' && r.usage_json.costCentsExact === 0.4542 && r.usage_json.costStatus === 'priced'),
      ).toBe(true);
      // each run's cost event is booked right after its end commits
      const sum = await waitFor(async () => {
        const [r] = await s.t.dataSource.query(
          `SELECT count(*)::int AS events, sum(cost_cents)::int AS cents, sum(priced_cents)::float AS priced FROM cost_events WHERE agent_id = $1`,
          [agent.id],
        );
        return r.events === 100 ? r : null;
      }, 'the 100 runs booked');
      expect(sum.priced).toBeCloseTo(45.42, 6);
      // whole cents carry the remainder forward: 46 booked (each run rounded up would book 100)
      expect(sum.cents).toBe(46);
      const [first] = await s.t.dataSource.query(
        `SELECT priced_cents::float AS priced, cost_cents FROM cost_events WHERE agent_id = $1 ORDER BY created_at LIMIT 1`,
        [agent.id],
      );
      expect(first).toEqual({ priced: 0.4542, cost_cents: 1 });
      fs.rmSync(dir, { recursive: true, force: true });
    });
  });

  describe('clear run errors', () => {
    it('a missing binary', async () => {
      const agent = await claudeAgent({ command: '/nonexistent/claude' });
      const run = await waitRun(s.t, await wakeRun(s.t, agent.id), TERMINAL, 30_000);
      expect(run).toMatchObject({ status: 'failed', error_code: 'adapter_command_not_found' });
    });

    it('a missing key', async () => {
      const env = claudeEnv(fake);
      delete (env as Record<string, string>).ANTHROPIC_API_KEY;
      const agent = await claudeAgent({ env });
      const run = await waitRun(s.t, await wakeRun(s.t, agent.id), TERMINAL, 60_000);
      expect(run).toMatchObject({ status: 'failed', error_code: 'runtime_auth_failed' });
      expect(run.error).toMatch(/log/i);
    });

    it('an unreachable endpoint (ends after a few failed connections instead of retrying for minutes)', async () => {
      const agent = await claudeAgent({ env: claudeEnv({ url: 'http://127.0.0.1:9' }), maxConnectRetries: 2 });
      const run = await waitRun(s.t, await wakeRun(s.t, agent.id), TERMINAL, 60_000);
      expect(run).toMatchObject({ status: 'failed', error_code: 'runtime_endpoint_unreachable' });
      expect(await runLog(run.id)).toContain('api_retry');
    });
  });

  it('waits for nothing it does not need (smoke: the fake saw only Messages API calls)', async () => {
    await waitFor(async () => fake.requests.length > 0, 'requests');
    expect(fake.requests.every((r) => r.url.startsWith('/v1/messages'))).toBe(true);
  });
});
