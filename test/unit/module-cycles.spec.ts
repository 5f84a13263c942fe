import { cycles, explain, fileGraph, folderGraph, layers, renderModuleMap, tierOf } from '../support/import-graph';

/**
 * No circle between folders nor between files, `import type` included (lint's import-x/no-cycle
 * sees files only, and skips type-only imports), and no arrow from a lower tier (config, database,
 * common, modules, cli) to a higher one. `MODULE_MAP=1` prints the module map of
 * docs/architecture.md (`npm run docs:tables` writes it; test/unit/docs-tables checks it).
 */
describe('folder import graph', () => {
  const graph = folderGraph();
  if (process.env.MODULE_MAP) process.stdout.write(renderModuleMap(layers(graph)) + '\n');

  it('sees the folders and their imports', () => {
    expect(graph.size).toBeGreaterThan(40);
    expect(graph.get('modules/issues')?.has('database')).toBe(true);
  });

  it('has no arrow from a lower tier to a higher one (config, database, common, modules, cli)', () => {
    const upward = [...graph].flatMap(([from, edges]) =>
      [...edges].filter(([to]) => tierOf(to) > tierOf(from)).map(([to, via]) => `${from} -> ${to}: ${via.join('; ')}`),
    );
    expect([...graph.keys()].filter((f) => tierOf(f) < 0)).toEqual([]);
    expect(upward).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const g = new Map([
      ['a', new Map([['b', ['x']]])],
      ['b', new Map([['c', ['y']]])],
      ['c', new Map([['a', ['z']]])],
      ['d', new Map([['a', ['w']]])],
    ]);
    expect(cycles(g)).toEqual([['a', 'b', 'c']]);
  });

  it('has no circle between files, type-only imports included', () => {
    const files = fileGraph();
    const found = cycles(files).map((scc) => explain(files, scc));
    expect(found).toEqual([]);
  });

  it('has no cycle between folders, type-only imports included', () => {
    const found = cycles(graph).map((scc) => explain(graph, scc));
    expect(found).toEqual([]);
  });
});
