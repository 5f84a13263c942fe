import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { waitFor } from '../support/heartbeat';
import { ServiceProcess, startService } from '../support/service-process';
import { createTestDatabase } from '../support/test-app';
import { tmpPath } from '../support/tmp';

const ROOT = path.join(__dirname, '..', '..');

/** The shell blocks of the README's "Your first agent in five minutes", found by what they do. */
function walkthrough(): Record<'setup' | 'hire' | 'repoint' | 'assign' | 'read' | 'costs', string> {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Your first agent'), readme.indexOf('## What an agent does'));
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
  const find = (marker: string) => {
    const found = blocks.filter((b) => b.includes(marker));
    if (found.length !== 1) throw new Error(`README walkthrough: ${found.length} blocks with ${marker}`);
    return found[0];
  };
  return {
    setup: find('API=http'),
    hire: find('AGENT=$(post'),
    repoint: find('{"adapterConfig": {"args"'),
    assign: find('ISSUE=$(post'),
    read: find('RUN=$(get'),
    costs: find('costs/summary'),
  };
}

/**
 * The README's walkthrough, as written, in bash against a service on a port that is not 3100 (the
 * blocks take PORT), as the user running the tests (as root: the script is given a readable copy):
 * an empty run list reads `undefined` (it used to be a TypeError stack trace), the re-pointing
 * PATCH, the run succeeding, the issue done, the comment and the cost.
 */
describe('the README walkthrough (bash, curl, node)', () => {
  let svc: ServiceProcess;
  let port: string;
  const dataDir = fs.mkdtempSync(tmpPath('svc-readme-'));
  const copies: string[] = [];
  const steps = walkthrough();

  beforeAll(async () => {
    svc = await startService({ DATABASE_URL: await createTestDatabase(), SERVICE_DATA_DIR: dataDir });
    port = new URL(svc.baseUrl).port;
  }, 180_000);
  afterAll(async () => {
    await svc?.stop();
    for (const dir of [dataDir, ...copies]) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Runs the blocks after `vars` (NAME=value lines) in bash in the repository; stdout, stderr and the status. */
  const bash = (vars: Record<string, string>, ...blocks: string[]) => {
    const assignments = Object.entries(vars).map(([k, v]) => `${k}='${v}'`);
    const res = spawnSync('bash', ['-c', [...assignments, ...blocks].join('\n')], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: port },
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { out: res.stdout, err: res.stderr, status: res.status };
  };

  it('works as written on another port, from an empty run list to the run, the comment and the cost', async () => {
    expect(port).not.toBe('3100');
    const hired = bash({}, steps.setup, steps.hire, 'echo "VARS $COMPANY $AGENT $SCRIPT"', steps.read.split('\n')[0], 'echo "RUN=$RUN"');
    expect(hired.err).toBe('');
    const [, company, agent, script] = /VARS (\S+) (\S+) (\S+)/.exec(hired.out)!;
    if (script !== path.join(ROOT, 'examples', 'agents', 'first-agent.js')) copies.push(path.dirname(script));
    expect(hired.out).toContain(`company ${company}, agent ${agent}`);
    // no run yet: the list is empty, and reading it is not a stack trace
    expect(hired.out).toContain('RUN=undefined');

    const repointed = bash({ COMPANY: company, AGENT: agent, SCRIPT: script }, steps.setup, steps.repoint);
    expect({ err: repointed.err, args: repointed.out.trim() }).toEqual({ err: '', args: expect.stringContaining(script) });

    const assigned = bash({ COMPANY: company, AGENT: agent }, steps.setup, steps.assign, 'echo "ISSUE $ISSUE"');
    expect(assigned.err).toBe('');
    const issue = /ISSUE (\S+)/.exec(assigned.out)![1];
    await waitFor(
      async () => {
        const runs = (await svc.api('GET', `/api/companies/${company}/heartbeat-runs?agentId=${agent}`)).body;
        return runs.length && !['queued', 'running'].includes(runs[0].status) ? runs[0] : null;
      },
      'the run to end',
      60_000,
    );

    const read = bash({ COMPANY: company, AGENT: agent, ISSUE: issue }, steps.setup, steps.read, steps.costs);
    expect(read.err).toBe('');
    const lines = read.out.split('\n');
    expect(lines[0]).toBe('succeeded');
    expect(lines).toContain('done');
    expect(read.out).toContain('Hello from Ada.');
    expect(read.out).toMatch(/"spendCents":3\b/);
  }, 180_000);
});
