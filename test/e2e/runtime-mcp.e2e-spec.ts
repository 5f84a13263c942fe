import * as fs from 'node:fs';
import * as path from 'node:path';
import { AgentIdentities } from '../../src/common/process/agent-identities';
import { createAgent } from '../support/agents';
import { claudeBinary, claudeEnv, FakeAnthropic, startFakeAnthropic, transcript } from '../support/fake-anthropic';
import { FakeGemini, geminiBinary, startFakeGemini } from '../support/fake-gemini';
import { codexBinary, FakeOpenAi, opencodeBinary, startFakeOpenAi } from '../support/fake-openai';
import { FIXTURES, TERMINAL, waitFor, waitRun, wakeRun } from '../support/heartbeat';
import { useRuntimeApp } from '../support/runtimes';
import { startFakeMcpServer } from '../support/fake-mcp-server';
import { createSecret } from '../support/secrets';
import { profileFor, remoteConnection } from '../support/tools';

/** Every file under `dir` whose content includes `needle` (a walk of the agent's home). */
function filesContaining(dir: string, needle: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && fs.statSync(p).size < 20_000_000 && fs.readFileSync(p).includes(needle)) found.push(p);
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return found;
}

/** The name under which a CLI offered the model a tool of the service's server (each CLI names MCP tools its own way). */
function offeredName(body: unknown, tool: string): string | null {
  const m = new RegExp(`"name":"([A-Za-z0-9_.-]*${tool})"`).exec(JSON.stringify(body));
  return m ? m[1] : null;
}

/**
 * Every CLI run is configured with the service's MCP server (named `aos`), authenticated with the
 * run's own token read from the run's environment: the real CLIs against loopback fakes of their
 * model APIs, whose scripted tool calls go through /api/mcp. One app for the four CLIs.
 */
describe('the service’s MCP server in each CLI run', () => {
  let claudeFake: FakeAnthropic;
  let openAiFake: FakeOpenAi;
  let geminiFake: FakeGemini;
  const s = useRuntimeApp('claude_local', () => ({ command: claudeBinary(), model: 'claude-sonnet-4-5', env: claudeEnv(claudeFake) }));

  beforeAll(async () => {
    claudeFake = await startFakeAnthropic(() => ({ text: 'idle', usage: { input: 10, output: 1 } }));
    openAiFake = await startFakeOpenAi(() => ({ text: 'idle', usage: { input: 10, output: 1 } }));
    geminiFake = await startFakeGemini(() => ({ text: 'idle', usage: { prompt: 10, output: 1 } }));
  });
  afterAll(async () => {
    await Promise.all([claudeFake.close(), openAiFake.close(), geminiFake.close()]);
  });

  const newIssue = async (title: string) =>
    (await s.t.http.post(`/api/companies/${s.companyId}/issues`).send({ title, status: 'todo' }).expect(201)).body as {
      id: string;
      identifier: string;
    };
  const settled = (agentId: string) =>
    waitFor(
      async () =>
        !(await s.t.dataSource.query(`SELECT 1 FROM heartbeat_runs WHERE agent_id = $1 AND status IN ('queued','running')`, [agentId]))
          .length,
      'no live run of the agent',
      60_000,
    );
  const toolResults = (body: unknown) => (JSON.stringify(body).match(/"tool_result"/g) ?? []).length;

  it('Claude Code: the model checks out and comments with mcp__aos__ tools; the run succeeds, the records name the run, no curl', async () => {
    // permission prompts on: the service's tools are allowed by the run's configuration (print mode cannot answer a prompt)
    const agent = await s.agent({ dangerouslySkipPermissions: false, permissionMode: 'default' });
    const issue = await newIssue('Done through MCP by Claude Code');
    const start = claudeFake.requests.length;
    claudeFake.setScript((r) => {
      const done = toolResults(r.body.messages);
      if (done === 0)
        return { toolUse: { name: 'mcp__aos__checkout_issue', input: { issueId: issue.identifier } }, usage: { input: 100, output: 10 } };
      if (done === 1)
        return {
          toolUse: { name: 'mcp__aos__add_comment', input: { issueId: issue.id, body: 'Commented through MCP' } },
          usage: { input: 120, output: 10 },
        };
      return { text: 'Checked out and commented.', usage: { input: 140, output: 5 } };
    });
    const runId = await wakeRun(s.t, agent.id, { source: 'on_demand', reason: 'work the issue', payload: { issueId: issue.id } });
    const run = await waitRun(s.t, runId, TERMINAL, 90_000);
    expect({ status: run.status, error: run.error }).toEqual({ status: 'succeeded', error: null });
    const mine = claudeFake.requests.slice(start);
    // the CLI offered the model the service's tools under Claude Code's MCP names, and nothing ran a shell
    const offered = ((mine[0].body.tools as Array<{ name: string }>) ?? []).map((t) => t.name);
    expect(offered).toEqual(expect.arrayContaining(['mcp__aos__checkout_issue', 'mcp__aos__add_comment', 'mcp__aos__whoami']));
    expect(JSON.stringify(mine.map((r) => r.body.messages))).not.toMatch(/"name":"Bash"/);
    // the tool results the model got back: the checkout (in_progress, this run) and the comment
    expect(transcript(mine[mine.length - 1])).toContain(runId);
    expect(transcript(mine[mine.length - 1])).toContain('Commented through MCP');
    const comments = (await s.t.http.get(`/api/issues/${issue.id}/comments`).expect(200)).body as Array<{
      body: string;
      authorAgentId: string;
    }>;
    expect(comments).toEqual([expect.objectContaining({ body: 'Commented through MCP', authorAgentId: agent.id })]);
    const records = await s.t.dataSource.query(
      `SELECT action, agent_id, run_id FROM activity_log WHERE entity_id = $1 AND action IN ('issue.checked_out', 'issue.comment_added') ORDER BY created_at`,
      [issue.id],
    );
    expect(records).toEqual([
      { action: 'issue.checked_out', agent_id: agent.id, run_id: runId },
      { action: 'issue.comment_added', agent_id: agent.id, run_id: runId },
    ]);
    // the run token is in no argument of the CLI and in no line of the run log
    const log = await s.runLog(runId);
    expect(log).not.toMatch(/eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\./);
    await settled(agent.id);
  });

  it('Claude Code: a company tool through the gateway; its secret header never reaches the agent (environment, files, run log)', async () => {
    const secret = await createSecret(s.t, s.companyId);
    const remote = await startFakeMcpServer(secret.plaintext);
    try {
      const conn = await remoteConnection(s.t, s.companyId, remote.url, secret.id, { toolPrefix: 'remote' });
      const agent = await s.agent();
      await profileFor(s.t, s.companyId, agent.id, [{ selectorType: 'connection', connectionId: conn.id, policy: 'allow' }]);
      const start = claudeFake.requests.length;
      claudeFake.setScript((r) => {
        const done = toolResults(r.body.messages);
        if (done === 0)
          return { toolUse: { name: 'mcp__aos__remote__echo', input: { text: 'through the gateway' } }, usage: { input: 100, output: 10 } };
        // the agent looks at its whole environment: the model sees what a prompt injection could
        if (done === 1)
          return { toolUse: { name: 'Bash', input: { command: 'env', description: 'environment' } }, usage: { input: 120, output: 10 } };
        return { text: 'Echoed.', usage: { input: 140, output: 5 } };
      });
      const runId = await wakeRun(s.t, agent.id, { source: 'on_demand', reason: 'use the company tool' });
      const run = await waitRun(s.t, runId, TERMINAL, 90_000);
      expect({ status: run.status, error: run.error }).toEqual({ status: 'succeeded', error: null });
      const mine = claudeFake.requests.slice(start);
      expect(transcript(mine[mine.length - 1])).toContain('echo: through the gateway');
      expect(transcript(mine[mine.length - 1])).toContain('SERVICE_RUN_ID');
      expect(remote.calls).toEqual([expect.objectContaining({ tool: 'echo', authorization: `Bearer ${secret.plaintext}` })]);
      // not in the agent's environment (printed to the model), the model's requests, the run log, or the agent's files
      for (const r of mine) expect(JSON.stringify(r.body)).not.toContain(secret.plaintext);
      expect(await s.runLog(runId)).not.toContain(secret.plaintext);
      const home = new AgentIdentities(s.t.config.agentIdentity).forAgent(agent.id, s.companyId)?.home;
      if (home) expect(filesContaining(home, secret.plaintext)).toEqual([]);
      const [record] = await s.t.dataSource.query(
        `SELECT agent_id, run_id, details FROM activity_log WHERE action = 'tool.called' AND run_id = $1`,
        [runId],
      );
      expect(record).toMatchObject({ agent_id: agent.id, details: { tool: 'echo', outcome: 'succeeded' } });
      // the run page: the call's decision carries Claude Code's tool use id (MCP _meta), the id of the call in the run's transcript
      const { decisions } = (await s.t.http.get(`/api/companies/${s.companyId}/tools/runs/${runId}/decisions`).expect(200)).body;
      expect(decisions).toEqual([
        expect.objectContaining({ decision: 'allow', outcome: 'success', invocation: expect.objectContaining({ toolName: 'echo' }) }),
      ]);
      expect(decisions[0].invocation.id).toMatch(/^toolu_/);
      expect(decisions[0].invocation.id).toBe(decisions[0].invocation.toolUseId);
      expect(await s.runLog(runId)).toContain(decisions[0].invocation.id);
      await settled(agent.id);
    } finally {
      await remote.close();
    }
  });

  it('Claude Code: a local tool connection runs under the agent’s own uid with its secret variable; the run log redacts the value', async () => {
    const secret = await createSecret(s.t, s.companyId);
    const local = await s.t.http
      .post(`/api/companies/${s.companyId}/tools/connections`)
      .send({
        name: 'Local fixture',
        transport: 'local_stdio',
        toolPrefix: 'localfx',
        transportConfig: {
          command: process.execPath,
          args: [path.join(FIXTURES, 'stdio-mcp-server.js')],
          env: { PLAIN_SETTING: 'plain-42' },
        },
        credentialRefs: [{ name: 'key', secretId: secret.id, placement: 'env', key: 'LOCAL_KEY' }],
      })
      .expect(201);
    const agent = await s.agent();
    await profileFor(s.t, s.companyId, agent.id, [{ selectorType: 'connection', connectionId: local.body.id, policy: 'allow' }]);
    const start = claudeFake.requests.length;
    claudeFake.setScript((r) => {
      const done = toolResults(r.body.messages);
      if (done === 0) return { toolUse: { name: 'mcp__localfx__env_check', input: {} }, usage: { input: 100, output: 10 } };
      // the value is in the CLI's environment (a local server needs it): the run log must not show it
      if (done === 1)
        return {
          toolUse: { name: 'Bash', input: { command: 'echo "$SERVICE_MCP_LOCALFX_LOCAL_KEY"', description: 'x' } },
          usage: { input: 120, output: 10 },
        };
      return { text: 'Checked.', usage: { input: 140, output: 5 } };
    });
    try {
      const runId = await wakeRun(s.t, agent.id, { source: 'on_demand', reason: 'use the local tool' });
      const run = await waitRun(s.t, runId, TERMINAL, 90_000);
      expect({ status: run.status, error: run.error }).toEqual({ status: 'succeeded', error: null });
      const seen = transcript(claudeFake.requests[claudeFake.requests.length - 1]);
      expect(seen).toContain(`LOCAL_KEY set (length ${secret.plaintext.length}); PLAIN_SETTING=plain-42`);
      const identity = new AgentIdentities(s.t.config.agentIdentity).forAgent(agent.id, s.companyId);
      if (identity) expect(seen).toContain(`uid=${identity.uid}`);
      expect(claudeFake.requests.slice(start).length).toBe(3);
      expect(await s.runLog(runId)).not.toContain(secret.plaintext);
      await settled(agent.id);
    } finally {
      await s.t.http.delete(`/api/tool-connections/${local.body.id}`).expect(200);
    }
  });

  /** One checkout through the CLI's MCP tool: the run succeeds and the issue is checked out by that run, recorded as such. */
  async function checkoutThrough(adapterType: string, adapterConfig: Record<string, unknown>, script: (issueId: string) => void) {
    const agent = await createAgent(s.t, s.companyId, { adapterType, adapterConfig: { timeoutSec: 120, ...adapterConfig } });
    const issue = await newIssue(`Done through MCP by ${adapterType}`);
    script(issue.identifier);
    const runId = await wakeRun(s.t, agent.id, { source: 'on_demand', reason: 'work the issue', payload: { issueId: issue.id } });
    const run = await waitRun(s.t, runId, TERMINAL, 120_000);
    expect({ status: run.status, error: run.error }).toEqual({ status: 'succeeded', error: null });
    const after = (await s.t.http.get(`/api/issues/${issue.id}`).expect(200)).body;
    expect(after).toMatchObject({ status: 'in_progress', checkoutRunId: runId, assigneeAgentId: agent.id });
    const records = await s.t.dataSource.query(
      `SELECT agent_id, run_id FROM activity_log WHERE entity_id = $1 AND action = 'issue.checked_out'`,
      [issue.id],
    );
    expect(records).toEqual([{ agent_id: agent.id, run_id: runId }]);
    await settled(agent.id);
    return { agent, runId };
  }

  /**
   * An OpenAI Responses script: call the offered checkout tool once, then answer. Codex offers an MCP
   * server's tools in a `namespace` tool (`mcp__aos`), OpenCode as flat functions (`aos_…`).
   */
  const openAiCheckout = (issueId: string) =>
    openAiFake.setScript((req) => {
      const tools = (req.body.tools ?? []) as Array<{ type: string; name: string; tools?: Array<{ name: string }> }>;
      const ns = tools.find((t) => t.type === 'namespace' && t.tools?.some((x) => x.name === 'checkout_issue'));
      const name = ns ? 'checkout_issue' : offeredName(tools, 'checkout_issue');
      const answered = JSON.stringify(req.body.input ?? '').includes('function_call_output');
      return name && !answered
        ? { toolCall: { name, namespace: ns?.name, arguments: { issueId } }, usage: { input: 50, output: 5 } }
        : { text: 'done', usage: { input: 60, output: 2 } };
    });

  it('Codex: its mcp_servers configuration names the service (token read from the environment); a checkout goes through', async () => {
    const start = openAiFake.requests.length;
    await checkoutThrough(
      'codex_local',
      { command: codexBinary(), model: 'gpt-5', env: { OPENAI_BASE_URL: openAiFake.url, OPENAI_API_KEY: 'sk-test-dummy' } },
      openAiCheckout,
    );
    expect(JSON.stringify(openAiFake.requests[start].body.tools)).toContain('"name":"mcp__aos"');
  });

  it('OpenCode: its mcp section names the service (token by {env:…}); a checkout goes through', async () => {
    const start = openAiFake.requests.length;
    await checkoutThrough(
      'opencode_local',
      {
        command: opencodeBinary(),
        model: 'openai/gpt-5',
        env: { OPENAI_BASE_URL: openAiFake.url, OPENAI_API_KEY: 'sk-test-dummy' },
      },
      openAiCheckout,
    );
    expect(offeredName(openAiFake.requests[start].body.tools, 'checkout_issue')).toMatch(/aos/);
  });

  it('Gemini CLI: its settings name the service with the token as a variable reference; a checkout goes through', async () => {
    const start = geminiFake.requests.length;
    const { agent } = await checkoutThrough(
      'gemini_local',
      {
        command: geminiBinary(),
        model: 'gemini-2.5-pro',
        env: { GOOGLE_GEMINI_BASE_URL: geminiFake.url, GEMINI_API_KEY: 'test-dummy-key' },
      },
      (issueId) =>
        geminiFake.setScript((req) => {
          const name = offeredName(req.body.tools, 'checkout_issue');
          const answered = JSON.stringify(req.body.contents ?? '').includes('functionResponse');
          return name && !answered
            ? { toolCall: { name, args: { issueId } }, usage: { prompt: 50, output: 5 } }
            : { text: 'done', usage: { prompt: 60, output: 2 } };
        }),
    );
    expect(offeredName(geminiFake.requests[start].body.tools, 'checkout_issue')).toBeTruthy();
    const home = new AgentIdentities(s.t.config.agentIdentity).forAgent(agent.id, s.companyId)?.home ?? process.env.HOME!;
    const settings = JSON.parse(fs.readFileSync(path.join(home, '.gemini', 'settings.json'), 'utf8'));
    expect(settings.mcpServers.aos).toMatchObject({
      httpUrl: `${s.t.baseUrl}/api/mcp`,
      headers: { Authorization: 'Bearer $SERVICE_API_KEY', 'X-Service-Run-Id': '$SERVICE_RUN_ID' },
    });
  });
});
