import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../src/config/app-config';
import { AdapterExecutors } from '../../src/modules/adapters/adapter-executors';
import { AdapterRegistry } from '../../src/modules/adapters/adapter-registry.service';
import { SKILL_DELIVERIES, type AdapterExecutor } from '../../src/modules/adapters/adapter.types';
import { CodingCliRuntime } from '../../src/modules/adapters/runtimes/coding-cli.runtime';
import { codingCliRuntimes } from '../../src/modules/adapters/runtimes/coding-cli-runtimes';
import { MODEL_PROVIDER_IDS } from '../../src/modules/adapters/runtimes/model-providers';

const FIELD_TYPES = ['string', 'integer', 'number', 'boolean', 'string-array', 'string-map', 'object', 'env'];

/** What is missing or wrong in an executor's description of itself (empty: complete). */
function descriptionProblems(e: AdapterExecutor): string[] {
  const d = (e as Partial<AdapterExecutor>).description;
  if (!d) return [`${e.type}: no description`];
  const problems: string[] = [];
  if (typeof d.label !== 'string' || !d.label.trim()) problems.push(`${e.type}: no label`);
  const schema = d.configSchema;
  if (schema?.type !== 'object' || !schema.properties || typeof schema.properties !== 'object')
    problems.push(`${e.type}: no config schema`);
  else {
    for (const [k, f] of Object.entries(schema.properties))
      if (!FIELD_TYPES.includes(f?.type)) problems.push(`${e.type}: field ${k} has no known type`);
    for (const k of schema.required ?? []) if (!(k in schema.properties)) problems.push(`${e.type}: required ${k} is not a field`);
    for (const [k] of d.outboundUrlFields ?? [])
      if (!(k in schema.properties) && k !== 'cancelUrl') problems.push(`${e.type}: URL field ${k} is not a field`);
  }
  if (!SKILL_DELIVERIES.includes(d.skills)) problems.push(`${e.type}: no skills delivery`);
  if (d.genAiSystem !== null && (typeof d.genAiSystem !== 'string' || !d.genAiSystem))
    problems.push(`${e.type}: genAiSystem must be a name or null`);
  return problems;
}

const executors = () =>
  new AdapterExecutors(
    loadConfig({ SERVICE_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'adapters-unit-')), SERVICE_EPHEMERAL_KEYS: 'true' }),
  );

describe('adapters describe themselves', () => {
  it('every built-in executor carries its label, config schema, skills delivery and GenAI system name', () => {
    const all = executors();
    expect(all.types().length).toBeGreaterThanOrEqual(14);
    expect(all.types().flatMap((t) => descriptionProblems(all.get(t)!))).toEqual([]);
  });

  it('the check fails for an executor without a description, or with an incomplete one', () => {
    const bare = {
      type: 'bare_local',
      validateConfig: () => [],
      start: () => ({ done: Promise.resolve({ status: 'succeeded' }), cancel: () => undefined }),
      testEnvironment: async () => ({ ok: true, checks: [] }),
    };
    expect(descriptionProblems(bare as unknown as AdapterExecutor)).toEqual(['bare_local: no description']);
    const half = { ...bare, description: { label: '', configSchema: { type: 'object', properties: { x: {} } }, skills: 'sometimes' } };
    expect(descriptionProblems(half as unknown as AdapterExecutor)).toEqual([
      'bare_local: no label',
      'bare_local: field x has no known type',
      'bare_local: no skills delivery',
      'bare_local: genAiSystem must be a name or null',
    ]);
  });

  it('the registry of types is the executors’ descriptions: no second list, no second schema', () => {
    const all = executors();
    const registry = new AdapterRegistry(all);
    expect(registry.list().map((d) => d.type)).toEqual(all.types());
    for (const d of registry.list()) {
      expect(d.builtIn).toBe(true);
      expect(d.label).toBe(all.get(d.type)!.description.label);
      expect(d.configSchema).toBe(all.get(d.type)!.description.configSchema);
    }
  });

  it('every coding CLI runtime file is in the list of runtimes, with its e2e spec', () => {
    const dir = path.join(__dirname, '../../src/modules/adapters/runtimes');
    const listed = codingCliRuntimes().map((r) => r.constructor);
    const unlisted: string[] = [];
    const types: string[] = [];
    for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.runtime.ts') && n !== 'coding-cli.runtime.ts')) {
      const exported = Object.values(require(path.join(dir, f)) as Record<string, unknown>);
      const runtimes = exported.filter(
        (v): v is typeof CodingCliRuntime => typeof v === 'function' && v.prototype instanceof CodingCliRuntime,
      );
      if (!runtimes.length) unlisted.push(`${f}: no class extending CodingCliRuntime`);
      for (const R of runtimes) if (!listed.includes(R)) unlisted.push(`${f}: ${R.name} is not in RUNTIMES (coding-cli-runtimes.ts)`);
    }
    expect(unlisted).toEqual([]);
    for (const r of codingCliRuntimes()) {
      types.push(r.type);
      const spec = path.join(__dirname, `../e2e/runtime-${r.type.replace(/_local$/, '')}.e2e-spec.ts`);
      expect({ type: r.type, spec: fs.existsSync(spec) }).toEqual({ type: r.type, spec: true });
    }
    expect(new Set(types).size).toBe(types.length);
  });

  it('each coding CLI names its provider for traces and connections and takes skills per run', () => {
    for (const r of codingCliRuntimes()) {
      expect(r).toBeInstanceOf(CodingCliRuntime);
      expect(r.description).toMatchObject({ label: r.spec.label, skills: 'ephemeral', genAiSystem: expect.any(String) });
      expect(r.spec.aiProviders.length).toBeGreaterThan(0);
      expect(r.spec.aiProviders.every((p) => MODEL_PROVIDER_IDS.includes(p))).toBe(true);
    }
  });
});
