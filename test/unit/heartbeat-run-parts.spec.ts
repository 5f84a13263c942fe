import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../src/config/app-config';
import { CLI_RUNTIMES, CliRuntimeAdapter, JsonLinesReport } from '../../src/modules/adapters/cli-runtime.adapter';
import { outcomeFromReport } from '../../src/modules/adapters/executor-kit';
import { HttpAdapter } from '../../src/modules/adapters/http.adapter';
import { ProcessAdapter } from '../../src/modules/adapters/process.adapter';
import { heartbeatPolicy } from '../../src/modules/heartbeat/heartbeat.types';
import { isDeadLocalOwner } from '../../src/modules/heartbeat/run-dispatcher.service';
import { RunLogService } from '../../src/modules/heartbeat/run-log.service';
import { RunTokenService } from '../../src/modules/heartbeat/run-token.service';

const config = (env: Record<string, string> = {}) =>
  loadConfig({ SERVICE_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'hb-unit-')), SERVICE_EPHEMERAL_KEYS: 'true', ...env });

describe('RunTokenService', () => {
  it('round-trips agent, company and run, and rejects tampering, other secrets and expiry', () => {
    const tokens = new RunTokenService(config());
    const t = tokens.issue({ agentId: 'a', companyId: 'c', runId: 'r' });
    expect(RunTokenService.looksLikeJwt(t)).toBe(true);
    expect(tokens.verify(t)).toEqual({ agentId: 'a', companyId: 'c', runId: 'r' });
    const [h, p, s] = t.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), rid: 'other' })).toString(
      'base64url',
    );
    expect(tokens.verify(`${h}.${forged}.${s}`)).toBeNull();
    expect(new RunTokenService(config()).verify(t)).toBeNull();
    expect(tokens.verify(tokens.issue({ agentId: 'a', companyId: 'c', runId: 'r' }, -10))).toBeNull();
  });
});

describe('RunLogWriter', () => {
  it('redacts secrets, writes NDJSON, and stops at the size cap with one truncated marker', () => {
    const c = config({ SERVICE_RUN_LOG_MAX_BYTES: '1024' });
    const logs = new RunLogService(c);
    const w = logs.open('co', 'run', ['super-secret-value']);
    w.write('stdout', 'token=super-secret-value\n');
    for (let i = 0; i < 50; i++) w.write('stderr', 'x'.repeat(100));
    w.close();
    const text = fs.readFileSync(path.join(c.dataDir, w.relativePath), 'utf8');
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ stream: 'stdout', chunk: 'token=[redacted]\n' });
    expect(text).not.toContain('super-secret-value');
    expect(lines[lines.length - 1]).toMatchObject({ stream: 'system', truncated: true });
    expect(lines.filter((l) => l.truncated)).toHaveLength(1);
    expect(w.size).toBeLessThanOrEqual(1024 + 200);
    const part = logs.read(w.relativePath, 0, 150);
    expect(part.content.endsWith('\n')).toBe(true);
    expect(part.nextOffset).toBe(Buffer.byteLength(part.content));
  });
});

describe('adapter config validation', () => {
  it('process: command required, env values strings or secret refs, timeouts >= 0', () => {
    const p = new ProcessAdapter();
    expect(p.validateConfig({ command: 'true' })).toEqual([]);
    expect(p.validateConfig({})).toContain('command is required');
    expect(p.validateConfig({ command: 'x', env: { A: 1 } })).toHaveLength(1);
    expect(p.validateConfig({ command: 'x', env: { A: { type: 'secret_ref', secretId: 's' } }, timeoutSec: 0, graceSec: 2 })).toEqual([]);
    expect(p.validateConfig({ command: 'x', timeoutSec: -1 })).toHaveLength(1);
  });

  it('http: url required and http(s), mode sync|async', () => {
    const h = new HttpAdapter();
    expect(h.validateConfig({ url: 'http://x' })).toEqual([]);
    expect(h.validateConfig({})).toContain('url is required');
    expect(h.validateConfig({ url: 'ftp://x', mode: 'later' })).toHaveLength(2);
  });

  it('reads usage, cost and summary from a report', () => {
    expect(outcomeFromReport({ usage: { a: 1 }, costCents: 2, summary: 's' })).toEqual({
      usage: { a: 1, costCents: 2 },
      result: { summary: 's' },
    });
    expect(outcomeFromReport('nope')).toEqual({ usage: null, result: null });
  });
});

describe('JsonLinesReport', () => {
  it('sums usage and keeps the session id and final result', () => {
    const r = new JsonLinesReport();
    r.accept('{"session_id":"s1"}');
    r.accept('garbage');
    r.accept('{"usage":{"input_tokens":1}}');
    r.accept('{"usage":{"input_tokens":2},"result":"done"}');
    expect(r.apply({ status: 'succeeded' })).toEqual({
      status: 'succeeded',
      usage: { input_tokens: 3 },
      result: { sessionId: 's1', summary: 'done' },
    });
  });

  it('takes the final result line as the total: per-message usage is never added to it (one message repeated per content block counts once)', () => {
    const r = new JsonLinesReport();
    const msg = { type: 'assistant', message: { id: 'm1', usage: { input_tokens: 1234, output_tokens: 1 } } };
    r.accept(JSON.stringify(msg));
    r.accept(JSON.stringify(msg));
    expect(r.usage).toEqual({ input_tokens: 1234, output_tokens: 1 });
    r.accept(JSON.stringify({ type: 'result', usage: { input_tokens: 1234, output_tokens: 56 }, total_cost_usd: 0.0045 }));
    expect(r.apply({ status: 'succeeded' }).usage).toEqual({ input_tokens: 1234, output_tokens: 56, total_cost_usd: 0.0045 });
  });
});

describe('heartbeatPolicy', () => {
  it('defaults: disabled, skipWhenIdle, on-demand wakes allowed, one run at a time', () => {
    expect(heartbeatPolicy({})).toEqual({ enabled: false, intervalSec: 0, skipWhenIdle: true, wakeOnDemand: true, maxConcurrentRuns: 1 });
    expect(heartbeatPolicy({ heartbeat: { enabled: true, intervalSec: 30, skipWhenIdle: false, maxConcurrentRuns: 3 } })).toMatchObject({
      enabled: true,
      intervalSec: 30,
      skipWhenIdle: false,
      maxConcurrentRuns: 3,
    });
  });
});

describe('lease owners and environment checks', () => {
  it('recognises a dead process of this host as a lease owner, never itself or another host', () => {
    expect(isDeadLocalOwner(`${os.hostname()}-999999-abcdef`)).toBe(true);
    expect(isDeadLocalOwner(`${os.hostname()}-${process.pid}-abcdef`)).toBe(false);
    expect(isDeadLocalOwner(`some-other-host-999999`)).toBe(false);
    expect(isDeadLocalOwner('instance-one')).toBe(false);
  });

  it('CLI runtimes report a missing CLI clearly in testEnvironment', async () => {
    const a = new CliRuntimeAdapter(CLI_RUNTIMES[0]);
    const missing = await a.testEnvironment({});
    expect(missing.ok).toBe(false);
    expect(missing.checks[0].message).toContain('adapter_command_not_found');
    expect((await a.testEnvironment({ command: 'node' })).ok).toBe(true);
  });
});
