import { insertAgent, TERMINAL, useHeartbeatApp, waitRun, wakeRun } from '../support/heartbeat';
import type { TestApp } from '../support/test-app';

/** A process agent with the secret bound as SECRET_TOKEN, running `script` with node. */
describe('secrets never reach run logs, whatever the write pattern', () => {
  const f = useHeartbeatApp();
  let t: TestApp;
  beforeAll(() => {
    t = f.t;
  });

  async function runWithSecret(plain: string, script: string): Promise<{ status: string; log: string; chunks: string[] }> {
    const secretId = (
      await t.http
        .post(`/api/companies/${f.companyId}/secrets`)
        .send({ name: `TOKEN_${Date.now()}_${Math.random().toString(36).slice(2)}`, value: plain })
        .expect(201)
    ).body.id;
    const agent = await insertAgent(t, f.companyId, {
      adapterConfig: {
        command: process.execPath,
        args: ['-e', script],
        env: { SECRET_TOKEN: { type: 'secret_ref', secretId, version: 'latest' } },
      },
    });
    const runId = await wakeRun(t, agent.id);
    const row = await waitRun(t, runId, TERMINAL);
    const raw = (await t.http.get(`/api/heartbeat-runs/${runId}/log?limitBytes=1048576`).expect(200)).body.content as string;
    const chunks = raw
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l).chunk as string);
    return { status: row.status, log: raw, chunks };
  }

  it('redacts a secret printed in two writes 0.4 s apart (first 12 characters, then the rest)', async () => {
    const plain = `tok-${Date.now()}-a1b2c3d4e5f6`;
    const script =
      "const s=process.env.SECRET_TOKEN;process.stdout.write('key='+s.slice(0,12));" +
      "setTimeout(()=>process.stdout.write(s.slice(12)+' end\\n'),400)";
    const { status, log, chunks } = await runWithSecret(plain, script);
    expect(status).toBe('succeeded');
    expect(chunks.join('')).toBe('key=[redacted] end\n');
    expect(log).not.toContain(plain.slice(0, 12));
    expect(log).not.toContain(plain.slice(12));
  });

  it('redacts the base64, base64url and URL-encoded forms of a bound secret', async () => {
    const plain = `p@ss w/rd+${Date.now()}?&=`;
    const script =
      'const s=process.env.SECRET_TOKEN;const b=Buffer.from(s);' +
      "console.log('b64='+b.toString('base64'));console.log('b64url='+b.toString('base64url'));" +
      "console.log('basic='+Buffer.from('user:'+s).toString('base64'));console.log('url='+encodeURIComponent(s))";
    const { status, log, chunks } = await runWithSecret(plain, script);
    expect(status).toBe('succeeded');
    const text = chunks.join('');
    for (const form of [
      Buffer.from(plain).toString('base64'),
      Buffer.from(plain).toString('base64url'),
      encodeURIComponent(plain),
      plain,
    ]) {
      expect(log).not.toContain(form);
    }
    expect(text).toMatch(/^b64=\[redacted\].{0,3}\nb64url=\[redacted\].{0,3}\nbasic=.{0,8}\[redacted\].{0,3}\nurl=\[redacted\]\n$/);
    const basic = /basic=(.*)\n/.exec(text)![1].replace('[redacted]', '');
    expect(Buffer.from(basic, 'base64').toString('latin1')).not.toContain(plain.slice(1, -1));
  });

  it('redacts a secret that straddles a chunk boundary of the output stream (64 KiB pipe reads)', async () => {
    const plain = `boundary-${Date.now()}-ffeeddccbbaa`;
    // one large write: the service reads the pipe in 64 KiB chunks, so the secret is cut in two
    const script =
      "const s=process.env.SECRET_TOKEN;const pad='x'.repeat(65536-7);" +
      "process.stdout.write(pad+s+'\\n'+pad+pad+s.slice(0,5)+'|'+s+'\\n')";
    const { status, log, chunks } = await runWithSecret(plain, script);
    expect(status).toBe('succeeded');
    expect(chunks.length).toBeGreaterThan(1);
    expect(log).not.toContain(plain);
    expect(log).not.toContain(plain.slice(7));
    const text = chunks.join('');
    expect(text.match(/\[redacted\]/g)).toHaveLength(2);
    expect(text).toContain(`${plain.slice(0, 5)}|[redacted]\n`);
    expect(text.length).toBe(3 * (65536 - 7) + 2 * '[redacted]'.length + 5 + 1 + 2);
  });
});
