import * as http from 'node:http';
import { randomUUID } from 'node:crypto';
import { createAgentWithKey } from '../support/agents';
import { bearer, createCompany } from '../support/factories';
import { insertAgent, TERMINAL, waitRun, wakeRun } from '../support/heartbeat';
import { skillMd } from '../support/skills';
import { createTestApp, TestApp } from '../support/test-app';
import { AUTHENTICATED, ownedCompany } from '../support/users';

/** A loopback server on `host` that logs what it is asked; `/to?u=<url>` redirects to <url>. */
async function server(host = '127.0.0.1'): Promise<{ url: string; port: number; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const srv = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/to') {
      res.writeHead(302, { location: u.searchParams.get('u') ?? '/' });
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/markdown' });
    res.end(u.pathname.endsWith('SKILL.md') ? skillMd(u.pathname.split('/').at(-2) ?? 'x') : 'internal-only-content');
  });
  await new Promise<void>((r) => srv.listen(0, host, r));
  const port = (srv.address() as { port: number }).port;
  return {
    url: `http://${host}:${port}`,
    port,
    hits,
    close: () =>
      new Promise<void>((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      }),
  };
}

const importFrom = (t: TestApp, companyId: string, source: string) =>
  t.http.post(`/api/companies/${companyId}/skills/import`).send({ source });

describe('POST /api/companies/:companyId/skills/import (URL sources, outbound guard)', () => {
  let t: TestApp;
  let inner: Awaited<ReturnType<typeof server>>;
  beforeAll(async () => {
    t = await createTestApp();
    inner = await server();
  });
  afterAll(async () => {
    await inner.close();
    await t.close();
  });

  it('needs credentials and keeps tenants apart', async () => {
    const [a, b] = [await createCompany(t), await createCompany(t)];
    const foreign = await createAgentWithKey(t, b.id);
    await importFrom(t, a.id, 'https://example.invalid/SKILL.md').set(bearer(foreign.token)).expect(403);
    const authd = await createTestApp({ databaseUrl: t.databaseUrl, env: { ...AUTHENTICATED, SERVICE_PUBLIC_URL: 'http://127.0.0.1:1' } });
    try {
      await importFrom(authd, a.id, 'https://example.invalid/SKILL.md').expect(401);
    } finally {
      await authd.close();
    }
  });

  it.each([
    ['loopback', () => `${inner.url}/s/SKILL.md`, 'loopback'],
    ['localhost (resolved by DNS)', () => `http://localhost:${inner.port}/s/SKILL.md`, 'loopback'],
    ['a decimal address', () => `http://2130706433:${inner.port}/s/SKILL.md`, 'loopback'],
    ['an octal address', () => `http://0177.0.0.1:${inner.port}/s/SKILL.md`, 'loopback'],
    ['a hex address', () => `http://0x7f000001:${inner.port}/s/SKILL.md`, 'loopback'],
    ['another loopback address', () => `http://127.1.2.3:${inner.port}/s/SKILL.md`, 'loopback'],
    ['0.0.0.0', () => `http://0.0.0.0:${inner.port}/s/SKILL.md`, 'unspecified'],
    ['IPv6 loopback', () => `http://[::1]:${inner.port}/s/SKILL.md`, 'loopback'],
    ['IPv4-mapped IPv6 loopback', () => `http://[::ffff:127.0.0.1]:${inner.port}/s/SKILL.md`, 'loopback'],
    ['IPv6 unspecified', () => `http://[::]:${inner.port}/s/SKILL.md`, 'unspecified'],
    ['the metadata address', () => 'http://169.254.169.254/latest/meta-data/SKILL.md', 'link_local'],
    ['IPv4-mapped metadata address', () => 'http://[::ffff:169.254.169.254]/SKILL.md', 'link_local'],
    ['10/8', () => 'http://10.0.0.1/SKILL.md', 'private'],
    ['172.16/12', () => 'http://172.20.1.1/SKILL.md', 'private'],
    ['192.168/16', () => 'http://192.168.1.1/SKILL.md', 'private'],
    ['CGNAT 100.64/10', () => 'http://100.64.0.1/SKILL.md', 'private'],
    ['unique-local fc00::/7', () => 'http://[fd00::1]/SKILL.md', 'unique_local'],
    ['IPv6 link-local', () => 'http://[fe80::1]/SKILL.md', 'link_local'],
    ['multicast', () => 'http://224.0.0.1/SKILL.md', 'multicast'],
  ])('refuses %s with 422 url_not_allowed and never connects', async (_what, source, reason) => {
    const co = await createCompany(t);
    const before = inner.hits.length;
    const res = await importFrom(t, co.id, source()).expect(422);
    expect(res.body).toMatchObject({ code: 'url_not_allowed', reason, field: 'source' });
    expect(JSON.stringify(res.body)).not.toContain('internal-only-content');
    expect(inner.hits.length).toBe(before);
  });

  it('refuses a redirect to loopback from an allowed host, and never follows it', async () => {
    // 127.0.0.2 stands for an allow-listed self-hosted server; its redirect leads to 127.0.0.1
    const allowed = await server('127.0.0.2');
    const t2 = await createTestApp({ databaseUrl: t.databaseUrl, env: { SERVICE_OUTBOUND_ALLOW: '127.0.0.2' } });
    try {
      const co = await createCompany(t2);
      const ok = await importFrom(t2, co.id, `${allowed.url}/kit/fine/SKILL.md`).expect(200);
      expect(ok.body.imported[0]).toMatchObject({ slug: 'fine', sourceType: 'url' });
      const before = inner.hits.length;
      const target = encodeURIComponent(`${inner.url}/api/companies/SKILL.md`);
      const res = await importFrom(t2, co.id, `${allowed.url}/to?u=${target}`).expect(422);
      expect(res.body).toMatchObject({ code: 'url_not_allowed', reason: 'loopback' });
      expect(res.body.error).toMatch(/redirect/i);
      expect(inner.hits.length).toBe(before);
      // a redirect to the metadata address: the same
      const meta = encodeURIComponent('http://169.254.169.254/latest/SKILL.md');
      expect((await importFrom(t2, co.id, `${allowed.url}/to?u=${meta}`).expect(422)).body.reason).toBe('link_local');
      // the allow-list names 127.0.0.2, not the rest of 127/8
      await importFrom(t2, co.id, `${inner.url}/kit/other/SKILL.md`).expect(422);
    } finally {
      await t2.close();
      await allowed.close();
    }
  });

  it('SERVICE_OUTBOUND_ALLOW with a CIDR re-opens that range, redirects included', async () => {
    const t2 = await createTestApp({ databaseUrl: t.databaseUrl, env: { SERVICE_OUTBOUND_ALLOW: '127.0.0.0/8' } });
    try {
      const co = await createCompany(t2);
      const via = encodeURIComponent(`${inner.url}/kit/hop/SKILL.md`);
      const res = await importFrom(t2, co.id, `http://localhost:${inner.port}/to?u=${via}`).expect(200);
      expect(res.body.imported[0]).toMatchObject({ slug: 'hop' });
      // other private ranges stay closed
      expect((await importFrom(t2, co.id, 'http://10.1.2.3/SKILL.md').expect(422)).body.reason).toBe('private');
    } finally {
      await t2.close();
    }
  });

  it('rejects a malformed SERVICE_OUTBOUND_ALLOW at boot', async () => {
    await expect(createTestApp({ databaseUrl: t.databaseUrl, env: { SERVICE_OUTBOUND_ALLOW: '10.0.0.0/99' } })).rejects.toThrow(
      /SERVICE_OUTBOUND_ALLOW/,
    );
  });
});

describe('http and gateway adapters (webhook targets)', () => {
  it('authenticated mode: loopback, private and metadata targets are refused on save with 422 url_not_allowed', async () => {
    const t = await createTestApp({ env: { ...AUTHENTICATED, SERVICE_PUBLIC_URL: 'http://127.0.0.1:1' } });
    try {
      const { company, owner } = await ownedCompany(t);
      const create = (adapterType: string, adapterConfig: Record<string, unknown>) =>
        t.http
          .post(`/api/companies/${company.id}/agents`)
          .set(bearer(owner.token))
          .send({ name: `hook-${randomUUID().slice(0, 6)}`, role: 'general', adapterType, adapterConfig });
      for (const url of [
        'http://127.0.0.1:3100/api/companies',
        'http://localhost/x',
        'http://2130706433/',
        'http://[::1]/',
        'http://169.254.169.254/',
      ]) {
        const res = await create('http', { url }).expect(422);
        expect(res.body).toMatchObject({ code: 'url_not_allowed', field: 'adapterConfig.url' });
      }
      expect((await create('http', { url: 'https://hooks.example.com/x', cancelUrl: 'http://10.0.0.8/c' }).expect(422)).body.field).toBe(
        'adapterConfig.cancelUrl',
      );
      expect((await create('gateway_a', { url: 'ws://127.0.0.1:9/' }).expect(422)).body.code).toBe('url_not_allowed');
      const agent = (await create('http', { url: 'https://hooks.example.com/x' }).expect(201)).body;
      await t.http
        .patch(`/api/agents/${agent.id}`)
        .set(bearer(owner.token))
        .send({ adapterConfig: { url: 'http://0.0.0.0:8080/' } })
        .expect(422);
    } finally {
      await t.close();
    }
  });

  describe('local_trusted mode', () => {
    let t: TestApp;
    let target: Awaited<ReturnType<typeof server>>;
    beforeAll(async () => {
      t = await createTestApp({ listen: true, env: { SERVICE_HEARTBEAT_KEEPALIVE_MS: '100' } });
      target = await server();
    });
    afterAll(async () => {
      await target.close();
      await t.close();
    });

    it("allows loopback webhook targets (the operator's own endpoints) but not private or metadata ones", async () => {
      const co = await createCompany(t);
      const ok = await t.http
        .post(`/api/companies/${co.id}/agents`)
        .send({ name: 'local-hook', role: 'general', adapterType: 'http', adapterConfig: { url: `${target.url}/hook` } })
        .expect(201);
      expect(ok.body.adapterConfig.url).toBe(`${target.url}/hook`);
      const res = await t.http
        .post(`/api/companies/${co.id}/agents`)
        .send({ name: 'meta-hook', role: 'general', adapterType: 'http', adapterConfig: { url: 'http://169.254.169.254/latest' } })
        .expect(422);
      expect(res.body.code).toBe('url_not_allowed');
    });

    it('a run whose target redirects to a private address fails with url_not_allowed, the redirect not followed', async () => {
      const co = await createCompany(t);
      const agent = await insertAgent(t, co.id, {
        adapterType: 'http',
        adapterConfig: { url: `${target.url}/to?u=${encodeURIComponent('http://10.255.255.1/steal')}` },
      });
      const row = await waitRun(t, await wakeRun(t, agent.id), TERMINAL);
      expect(row).toMatchObject({ status: 'failed', error_code: 'url_not_allowed' });
      expect(row.error).toMatch(/redirect/i);
    });
  });
});
