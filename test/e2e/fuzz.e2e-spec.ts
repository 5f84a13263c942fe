import { randomUUID } from 'node:crypto';
import { createAgent } from '../support/agents';
import { createCompany } from '../support/factories';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * Bad input is a 4xx, never a 5xx: every operation of the served OpenAPI document gets a fixed set
 * of malformed variants (NUL in every string field, parameter and path segment; wrong types; null;
 * deep nesting; huge strings; bad UUIDs). Routes added later are covered without touching this file.
 *
 * Path ids are real records of one company where the parameter name is known (so validation of the
 * body is reached), random UUIDs otherwise. DELETE operations run last.
 */

type Schema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  enum?: unknown[];
};
type Param = { name: string; in: 'path' | 'query' | 'header' | 'cookie'; schema?: Schema };
type Operation = {
  parameters?: Param[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  'x-callers'?: { public?: boolean };
};
interface Variant {
  label: string;
  path: string;
  query?: string;
  body?: unknown;
  rawBody?: string;
}

const NUL = 'a\u0000b';
const HUGE = 'x'.repeat(200_000);
const LONE_SURROGATE = 'x\ud800@example.com';

function deepValue(levels: number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < levels; i++) v = { n: v };
  return v;
}
const DEEP_BODY_TEXT = '{"a":' + '['.repeat(3000) + ']'.repeat(3000) + '}';

describe('fuzz: every operation of the OpenAPI document answers malformed input with a 4xx', () => {
  let t: TestApp;
  let doc: { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, Schema> } };
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await createTestApp({ listen: true, env: { SERVICE_ENABLE_COMPANY_DELETION: 'true' } });
    doc = (await t.http.get('/api/openapi.json').expect(200)).body;
    const company = await createCompany(t);
    ids.companyId = company.id;
    ids.agentId = (await createAgent(t, company.id)).id;
    const issue = await t.http.post(`/api/companies/${company.id}/issues`).send({ title: 'fuzz target' }).expect(201);
    ids.issueId = issue.body.id;
    const project = await t.http.post(`/api/companies/${company.id}/projects`).send({ name: 'fuzz project' });
    if (project.status === 201) ids.projectId = project.body.id;
    const goal = await t.http.post(`/api/companies/${company.id}/goals`).send({ title: 'fuzz goal' });
    if (goal.status === 201) ids.goalId = goal.body.id;
    ids.key = 'plan';
  }, 60_000);
  afterAll(() => t.close());

  const resolve = (s: Schema | undefined, depth = 0): Schema | undefined => {
    if (!s || depth > 10) return s;
    if (s.$ref) return resolve(doc.components?.schemas?.[s.$ref.split('/').pop()!], depth + 1);
    if (s.allOf?.length) {
      const merged: Schema = { type: 'object', properties: {} };
      for (const part of s.allOf) Object.assign(merged.properties!, resolve(part, depth + 1)?.properties ?? {});
      return merged;
    }
    return s;
  };

  const pathValue = (name: string): string => ids[name] ?? randomUUID();

  function fillPath(path: string, override?: [string, string]): string {
    return path.replace(/\{([^}]+)\}/g, (_, name: string) =>
      override && override[0] === name ? override[1] : encodeURIComponent(pathValue(name)),
    );
  }

  function typeOf(s: Schema | undefined): string | undefined {
    const ty = s?.type;
    return Array.isArray(ty) ? ty.find((x) => x !== 'null') : ty;
  }

  /** A value of the wrong JSON type for the property. */
  function wrongType(s: Schema | undefined): unknown {
    switch (typeOf(s)) {
      case 'string':
        return 12345;
      case 'number':
      case 'integer':
        return 'not-a-number';
      case 'boolean':
        return 'yes';
      case 'array':
        return { not: 'an array' };
      case 'object':
        return 'not-an-object';
      default:
        return [[[]]];
    }
  }

  function variantsFor(path: string, op: Operation): Variant[] {
    const out: Variant[] = [];
    const params = op.parameters ?? [];
    for (const p of params.filter((x) => x.in === 'path')) {
      out.push({ label: `path ${p.name} NUL`, path: fillPath(path, [p.name, '%00']) });
      out.push({ label: `path ${p.name} not a uuid`, path: fillPath(path, [p.name, 'not-a-uuid']) });
    }
    const base = fillPath(path);
    for (const p of params.filter((x) => x.in === 'query')) {
      const n = encodeURIComponent(p.name);
      out.push({ label: `query ${p.name} NUL`, path: base, query: `${n}=%00` });
      out.push({ label: `query ${p.name} nested`, path: base, query: `${n}[a][b]=1&${n}[]=2` });
      out.push({ label: `query ${p.name} huge`, path: base, query: `${n}=${'9'.repeat(5000)}` });
      out.push({ label: `query ${p.name} bad uuid`, path: base, query: `${n}=not-a-uuid` });
    }
    const schema = resolve(op.requestBody?.content?.['application/json']?.schema);
    if (op.requestBody?.content?.['application/json']) {
      out.push({ label: 'body deep nesting', path: base, rawBody: DEEP_BODY_TEXT });
      out.push({ label: 'body array', path: base, body: [] });
      out.push({ label: 'body deep object', path: base, body: { x: deepValue(200) } });
      const props = resolve(schema)?.properties ?? {};
      const allNul: Record<string, unknown> = {};
      for (const [name, raw] of Object.entries(props)) {
        const prop = resolve(raw);
        if (typeOf(prop) === 'string') allNul[name] = NUL;
        out.push({ label: `body ${name} NUL`, path: base, body: { [name]: NUL } });
        out.push({ label: `body ${name} wrong type`, path: base, body: { [name]: wrongType(prop) } });
        out.push({ label: `body ${name} null`, path: base, body: { [name]: null } });
        out.push({ label: `body ${name} huge`, path: base, body: { [name]: HUGE } });
        out.push({ label: `body ${name} surrogate`, path: base, body: { [name]: LONE_SURROGATE } });
        out.push({ label: `body ${name} bad uuid`, path: base, body: { [name]: 'not-a-uuid' } });
        out.push({ label: `body ${name} nested NUL`, path: base, body: { [name]: { [NUL]: [NUL] } } });
      }
      if (Object.keys(allNul).length) out.push({ label: 'body every string NUL', path: base, body: allNul });
    }
    return out;
  }

  it('gives no 5xx', async () => {
    const ops: Array<{ method: string; path: string; op: Operation }> = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
        // streams that never end on their own
        if (/\/events(\/ws)?$|\/stream$/.test(path) && method === 'get') continue;
        ops.push({ method, path, op });
      }
    }
    ops.sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
    const failures: string[] = [];
    let sent = 0;
    const send = async (method: string, v: Variant) => {
      const url = `${t.baseUrl}${v.path}${v.query ? `?${v.query}` : ''}`;
      const hasBody = v.rawBody !== undefined || v.body !== undefined;
      const res = await fetch(url, {
        method: method.toUpperCase(),
        headers: hasBody ? { 'content-type': 'application/json' } : {},
        body: v.rawBody ?? (v.body !== undefined ? JSON.stringify(v.body) : undefined),
        signal: AbortSignal.timeout(15_000),
      }).catch((err: Error) => ({ status: 599, text: async () => err.message }));
      sent++;
      if (res.status >= 500)
        failures.push(`${res.status} ${method.toUpperCase()} ${v.path} [${v.label}] ${(await res.text()).slice(0, 200)}`);
      else if ('body' in res && res.body) await res.arrayBuffer().catch(() => undefined);
    };
    for (const { method, path, op } of ops) {
      const variants = variantsFor(path, op);
      // a few at a time: enough to be quick, few enough for two cores
      for (let i = 0; i < variants.length; i += 6) await Promise.all(variants.slice(i, i + 6).map((v) => send(method, v)));
    }
    expect(sent).toBeGreaterThan(500);
    expect(failures).toEqual([]);
  }, 600_000);
});
