import * as net from 'node:net';
import { randomUUID } from 'node:crypto';
import { createAgentWithKey } from '../support/agents';
import { createCompany } from '../support/factories';
import { createTestApp, TestApp } from '../support/test-app';

const TWO_MIB = 2 * 1024 * 1024;

/**
 * A raw client that announces `total` bytes and sends them in slices with pauses, like a client
 * on a slow link; returns what the server answered and whether it hung up before the body was sent.
 */
async function slowPost(baseUrl: string, path: string, total: number): Promise<{ response: string; closedEarly: boolean }> {
  const { hostname, port } = new URL(baseUrl);
  const sock = net.connect(Number(port), hostname);
  let response = '';
  let closed = false;
  sock.on('data', (d) => (response += d.toString('utf8')));
  sock.on('close', () => (closed = true));
  sock.on('error', () => (closed = true));
  await new Promise((r) => sock.once('connect', r));
  sock.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${total}\r\n\r\n`);
  const slice = 64 * 1024;
  let closedEarly = false;
  for (let sent = 0; sent < total; sent += slice) {
    await new Promise((r) => setTimeout(r, 5));
    if (closed || sock.destroyed) {
      closedEarly = true;
      break;
    }
    sock.write(Buffer.alloc(Math.min(slice, total - sent), 0x61));
  }
  const deadline = Date.now() + 10_000;
  while (!closed && !response.includes('\r\n\r\n{') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 50));
  sock.destroy();
  return { response, closedEarly };
}

describe('request bodies over the limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ listen: true });
  });
  afterAll(() => t.close());

  it('answer a 413 JSON body that Node fetch can read (2 MiB)', async () => {
    const res = await fetch(`${t.baseUrl}/api/companies`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x'.repeat(TWO_MIB) }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: expect.any(String), code: 'payload_too_large' });
  });

  it('answer 413 to a chunked body (no Content-Length) too', async () => {
    let i = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (i++ >= 32) c.close();
        else c.enqueue(new Uint8Array(64 * 1024).fill(0x61));
      },
    });
    const res = await fetch(`${t.baseUrl}/api/companies`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect((await res.json()).code).toBe('payload_too_large');
  });

  it('answer 413 through supertest', async () => {
    const res = await t.http
      .post('/api/companies')
      .set('content-type', 'application/json')
      .send(JSON.stringify({ name: 'x'.repeat(TWO_MIB) }))
      .expect(413);
    expect(res.body.code).toBe('payload_too_large');
  });

  it('keep the connection open until the whole body has arrived, then answer (no reset mid-upload)', async () => {
    const { response, closedEarly } = await slowPost(t.baseUrl!, '/api/companies', TWO_MIB);
    expect(closedEarly).toBe(false);
    expect(response).toMatch(/^HTTP\/1\.1 413 /);
    expect(JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'payload_too_large' });
  });

  it('leave bodies within the limit alone', async () => {
    const res = await fetch(`${t.baseUrl}/api/companies`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: `ok-${randomUUID().slice(0, 6)}`, description: 'd'.repeat(2000) }),
    });
    expect(res.status).toBe(201);
  });
});

describe("422 invalid_reference: one answer for unknown and other companies' ids", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  /** Both answers with the id masked: they must be the same text. */
  const masked = (body: unknown, id: string) => JSON.stringify(body).split(id).join('<id>');

  it('POST /api/companies/:companyId/agents: reportsTo unknown or of another company gives one answer', async () => {
    const [a, b] = [await createCompany(t), await createCompany(t)];
    const foreign = await createAgentWithKey(t, b.id);
    const unknown = randomUUID();
    const answer = async (id: string) =>
      (
        await t.http
          .post(`/api/companies/${a.id}/agents`)
          .send({ name: 'r', role: 'general', adapterType: 'process', adapterConfig: { command: 'true' }, reportsTo: id })
          .expect(422)
      ).body;
    const [fromForeign, fromUnknown] = [await answer(foreign.agent.id), await answer(unknown)];
    expect(fromForeign).toMatchObject({ code: 'invalid_reference', field: 'reportsTo' });
    expect(masked(fromUnknown, unknown)).toBe(masked(fromForeign, foreign.agent.id));
  });

  it('POST /api/companies/:companyId/cost-events: projectId unknown or of another company gives one answer', async () => {
    const [a, b] = [await createCompany(t), await createCompany(t)];
    const own = await createAgentWithKey(t, a.id);
    const theirs = (await t.http.post(`/api/companies/${b.id}/projects`).send({ name: 'theirs' }).expect(201)).body;
    const unknown = randomUUID();
    const answer = async (projectId: string) =>
      (
        await t.http
          .post(`/api/companies/${a.id}/cost-events`)
          .send({ agentId: own.agent.id, provider: 'p', model: 'm', costCents: 1, occurredAt: new Date().toISOString(), projectId })
          .expect(422)
      ).body;
    const [fromForeign, fromUnknown] = [await answer(theirs.id), await answer(unknown)];
    expect(fromForeign).toMatchObject({ code: 'invalid_reference', field: 'projectId' });
    expect(masked(fromUnknown, unknown)).toBe(masked(fromForeign, theirs.id));
  });
});
