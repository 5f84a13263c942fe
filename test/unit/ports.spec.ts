import { basename, dirname } from 'node:path';
import * as ts from 'typescript';
import { RECORD_TABLES, TABLE_OWNERS } from '../../src/database/table-owners';
import { crossFolder, ports, Registration, registrations } from '../support/ports';
import { parse, tsFiles } from '../support/source-files';

/**
 * Ports follow one rule (docs/architecture.md, "Ports"): the lower module declares a port in
 * `<name>.port.ts`; the owner registers its part at start-up in `<name>.port-impl.ts`, and nowhere
 * else; each slot of a port has exactly one registration (a hook, `on…`/`add…`, any number).
 * The record-company registrations are generated from the owner map (`recordCompanies('<owner>')`).
 */
const all = ports();
const regs = registrations();
const where = (r: Registration) => `${r.file}:${r.line} ${r.target}.${r.slot}`;
const src = tsFiles('src');
const portFiles = src.filter((f) => f.endsWith('.port.ts'));
const implFiles = src.filter((f) => f.endsWith('.port-impl.ts'));
/** the port every registration of which is generated from the owner map (`recordCompanies('<owner>')`), not written in a port-impl */
const GENERATED_PORTS = ['src/common/references/record-company-resolvers.port.ts'];
const portName = (file: string) => basename(file).replace(/\.port(-impl)?\.ts$/, '');
const exportedClasses = (file: string) =>
  parse(file)
    .statements.filter((s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && !!s.name)
    .filter((s) => s.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword))
    .map((s) => (s.name as ts.Identifier).text);

describe('ports', () => {
  it('finds the ports and their registrations', () => {
    expect(all.length).toBeGreaterThan(10);
    expect(regs.length).toBeGreaterThan(20);
    expect(new Set(all.map((p) => p.name)).size).toBe(all.length);
  });

  it('gives every *.port.ts its *.port-impl.ts in another folder, and every *.port-impl.ts a *.port.ts of its name', () => {
    const implOf = (port: string) => implFiles.filter((f) => portName(f) === portName(port) && dirname(f) !== dirname(port));
    expect(portFiles.filter((f) => !GENERATED_PORTS.includes(f) && implOf(f).length === 0)).toEqual([]);
    expect(implFiles.filter((f) => !portFiles.some((p) => portName(p) === portName(f)))).toEqual([]);
  });

  it("lists each port-impl among the providers of its folder's module (the one place registrations happen)", () => {
    const modules = src.filter((f) => f.endsWith('.module.ts'));
    const unlisted = implFiles.flatMap((f) => {
      const own = modules.filter((m) => dirname(m) === dirname(f)).map((m) => parse(m).text);
      return exportedClasses(f)
        .filter((cls) => !own.some((text) => new RegExp(`providers:\\s*\\[[^\\]]*\\b${cls}\\b`).test(text)))
        .map((cls) => `${f} ${cls}`);
    });
    expect(implFiles.length).toBeGreaterThan(20);
    expect(unlisted).toEqual([]);
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
