import { basename } from 'node:path';
import { RECORD_TABLES, TABLE_OWNERS } from '../../src/database/table-owners';
import { crossFolder, ports, Registration, registrations } from '../support/ports';

/**
 * Ports follow one rule (docs/architecture.md, "Ports"): the lower module declares a port in
 * `<name>.port.ts`; the owner registers its part at start-up in `<name>.port-impl.ts`, and nowhere
 * else; each slot of a port has exactly one registration (a hook, `on…`/`add…`, any number).
 * The record-company registrations are generated from the owner map (`recordCompanies('<owner>')`).
 */
const all = ports();
const regs = registrations();
const where = (r: Registration) => `${r.file}:${r.line} ${r.target}.${r.slot}`;

describe('ports', () => {
  it('finds the ports and their registrations', () => {
    expect(all.length).toBeGreaterThan(10);
    expect(regs.length).toBeGreaterThan(20);
    expect(new Set(all.map((p) => p.name)).size).toBe(all.length);
  });

  it('registers with another folder only through a port, from a <name>.port-impl.ts named after it', () => {
    const bad = crossFolder(regs.filter((r) => !r.generatedFor)).filter((r) => {
      const port = all.find((p) => p.name === r.target);
      return !port || basename(r.file) !== basename(port.file).replace(/\.port\.ts$/, '.port-impl.ts');
    });
    expect(bad.map(where)).toEqual([]);
  });

  it('has port-impl files that register with a port of another folder, and nothing else', () => {
    const impls = regs.filter((r) => r.file.endsWith('.port-impl.ts'));
    const bad = impls.filter((r) => !all.some((p) => p.name === r.target && p.folder !== r.folder));
    expect(bad.map(where)).toEqual([]);
  });

  it('registers each slot of a port exactly once (hooks take any number), and every port at least once', () => {
    const counts = new Map<string, Registration[]>();
    for (const r of regs.filter((r) => all.some((p) => p.name === r.target) && !r.hook))
      counts.set(`${r.target}.${r.slot}`, [...(counts.get(`${r.target}.${r.slot}`) ?? []), r]);
    expect([...counts].filter(([, rs]) => rs.length !== 1).map(([slot, rs]) => `${slot}: ${rs.map(where).join(', ')}`)).toEqual([]);
    expect(all.filter((p) => !regs.some((r) => r.target === p.name)).map((p) => p.file)).toEqual([]);
  });

  it('registers the company of each record kind from the owner of its table (RECORD_TABLES), company-owned tables only', () => {
    const generated = regs.filter((r) => r.generatedFor);
    const home = (owner: string) => (owner.includes('/') ? owner : `modules/${owner}`);
    expect(generated.filter((r) => r.folder !== home(r.generatedFor as string)).map(where)).toEqual([]);
    expect(generated.map((r) => r.slot).sort()).toEqual(
      Object.keys(RECORD_TABLES)
        .map((k) => `register('${k}')`)
        .sort(),
    );
    expect(Object.values(RECORD_TABLES).filter((t) => TABLE_OWNERS[t].company !== 'company_id')).toEqual([]);
  });
});
