import { randomUUID } from 'node:crypto';
import * as net from 'node:net';
import { bearer, uniq } from './factories';
import { sqlAgent, sqlAgentKey } from './sql';
import { createTestApp, TestApp } from './test-app';
import { tmpPath } from './tmp';

/** A record as the API returns it. */
export type ApiRecord = { id: string; [field: string]: any };

export interface DirectAgent {
  id: string;
  token: string;
  auth: Record<string, string>;
}

/**
 * An agent plus a working API key, written straight into the database (the agents API is built
 * elsewhere; these tests only need an agent caller and agent ids).
 */
export async function insertAgentWithKey(
  t: TestApp,
  companyId: string,
  extra: { role?: string; status?: string } = {},
): Promise<DirectAgent> {
  const { id } = await sqlAgent(t, companyId, extra);
  const token = await sqlAgentKey(t, companyId, id);
  return { id, token, auth: bearer(token) };
}

export async function createGoal(t: TestApp, companyId: string, body: Record<string, unknown> = {}): Promise<ApiRecord> {
  const res = await t.http.post(`/api/companies/${companyId}/goals`).send({ title: uniq('Goal'), ...body });
  if (res.status !== 201) throw new Error(`createGoal: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function createProject(t: TestApp, companyId: string, body: Record<string, unknown> = {}): Promise<ApiRecord> {
  const res = await t.http.post(`/api/companies/${companyId}/projects`).send({ name: uniq('Proj'), ...body });
  if (res.status !== 201) throw new Error(`createProject: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function createWorkspace(t: TestApp, projectId: string, body: Record<string, unknown> = {}): Promise<ApiRecord> {
  const res = await t.http.post(`/api/projects/${projectId}/workspaces`).send({ cwd: tmpPath(randomUUID()), ...body });
  if (res.status !== 201) throw new Error(`createWorkspace: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Activity records of the company, newest first (optionally one action). */
export async function activityOf(t: TestApp, companyId: string, action?: string): Promise<Array<Record<string, any>>> {
  const rows = (await t.http.get(`/api/companies/${companyId}/activity`).expect(200)).body as Array<Record<string, any>>;
  return action ? rows.filter((r) => r.action === action) : rows;
}

/** A TCP port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A describe block proving that, on an authenticated instance, each request without credentials is 401. */
export function describeWithoutCredentials(requests: Array<['get' | 'post' | 'put' | 'patch' | 'delete', string, object?]>): void {
  describe('authenticated mode', () => {
    let auth: TestApp;
    beforeAll(async () => {
      auth = await createTestApp({ env: { SERVICE_DEPLOYMENT_MODE: 'authenticated' } });
    });
    afterAll(() => auth.close());

    it('rejects calls without credentials with 401', async () => {
      for (const [method, path, body] of requests) await auth.http[method](path).send(body).expect(401);
    });
  });
}
