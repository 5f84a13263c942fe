import { createTestApp, TestApp } from '../support/test-app';

/**
 * Every route with its declared callers. A change of access shows up as a snapshot diff in review;
 * a route without a declaration fails the test (the guard would refuse it anyway).
 */
describe('route access declarations', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('lists every route with its callers', async () => {
    const res = await t.http.get('/api/openapi.json').expect(200);
    const lines: string[] = [];
    const undeclared: string[] = [];
    for (const [path, item] of Object.entries(
      res.body.paths as Record<string, Record<string, { 'x-callers'?: { public?: boolean; callers?: string[]; runBound?: boolean } }>>,
    )) {
      for (const [method, op] of Object.entries(item)) {
        const c = op['x-callers'];
        if (!c) undeclared.push(`${method.toUpperCase()} ${path}`);
        else
          lines.push(
            `${method.toUpperCase()} ${path} -> ${c.public ? 'public' : c.callers!.join(',') + (c.runBound ? ' (run-bound)' : '')}`,
          );
      }
    }
    expect(undeclared).toEqual([]);
    expect(lines.sort().join('\n')).toMatchSnapshot();
  });
});

/**
 * Every mutating route declares its activity: the record the interceptor writes (`@LogActivity`),
 * why it writes none (`@NoActivity(reason)`: the service records what only it knows, or nothing of
 * a company changes), or the instance audit line of an instance-level change (`@InstanceAudit`).
 */
describe('activity declarations of mutating routes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('lists none without one', async () => {
    const res = await t.http.get('/api/openapi.json').expect(200);
    const missing: string[] = [];
    for (const [path, item] of Object.entries(res.body.paths as Record<string, Record<string, { 'x-activity'?: unknown }>>)) {
      for (const [method, op] of Object.entries(item)) {
        if (['post', 'put', 'patch', 'delete'].includes(method) && !op['x-activity']) missing.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
