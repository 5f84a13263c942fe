import { existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import * as ts from 'typescript';
import { parse, ROOT, tsFiles } from '../support/source-files';

/**
 * The import graph of src, of files and of folders (src/modules/<m>, src/common/<x>, src/config,
 * src/database, src/cli), built from every import (`import type`, `export … from` and `import('…')`
 * types included: a type-only circle is still a circle a reader walks). test/unit/module-cycles
 * checks it; the module map of docs/architecture.md is rendered from it (scripts/docs-tables.js).
 */

/** The tiers of src, lowest first: a folder imports folders of its own tier or of a lower one. */
export const TIERS = ['config', 'database', 'common', 'modules', 'cli'];
export const tierOf = (folder: string): number => TIERS.indexOf(folder.split('/')[0]);

/** The folder a src file belongs to, or null outside the graph (src/*.ts at the top). */
export function folderOf(file: string): string | null {
  const parts = file.split('/');
  if (parts[0] !== 'src' || parts.length < 3) return null;
  if (parts[1] === 'modules' || parts[1] === 'common') return parts.length > 3 ? `${parts[1]}/${parts[2]}` : null;
  return parts[1];
}

function resolve(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const base = normalize(join(dirname(from), spec))
    .split('\\')
    .join('/');
  for (const candidate of [`${base}.ts`, `${base}/index.ts`, base]) if (existsSync(join(ROOT, candidate))) return candidate;
  return null;
}

/** Module specifiers of every import, `import type`, `export … from` and `import('…')` type of a file. */
function specifiers(file: string): string[] {
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      out.push(node.moduleSpecifier.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      out.push(node.argument.literal.text);
    } else if (ts.isCallExpression(node) && node.arguments.length === 1 && ts.isStringLiteral(node.arguments[0])) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require'))
        out.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(parse(file));
  return out;
}

const resolvedImports = new Map<string, string[]>();
/** The src files a file imports (every kind of import above), parsed once per run. */
function importsOf(file: string): string[] {
  let out = resolvedImports.get(file);
  if (!out) {
    out = specifiers(file)
      .map((spec) => resolve(file, spec))
      .filter((t): t is string => t !== null);
    resolvedImports.set(file, out);
  }
  return out;
}

/** Folder → folder → the file imports behind that edge. */
export function folderGraph(): Map<string, Map<string, string[]>> {
  const graph = new Map<string, Map<string, string[]>>();
  for (const file of tsFiles('src')) {
    const from = folderOf(file);
    if (!from) continue;
    if (!graph.has(from)) graph.set(from, new Map());
    for (const target of importsOf(file)) {
      const to = folderOf(target);
      if (!to || to === from) continue;
      const edges = graph.get(from) as Map<string, string[]>;
      edges.set(to, [...(edges.get(to) ?? []), `${file} -> ${target}`]);
    }
  }
  return graph;
}

/** File → file → the import behind that edge (every src file, `import type` included). */
export function fileGraph(): Map<string, Map<string, string[]>> {
  const graph = new Map<string, Map<string, string[]>>();
  for (const file of tsFiles('src')) {
    const edges = new Map<string, string[]>();
    graph.set(file, edges);
    for (const target of importsOf(file)) if (target !== file) edges.set(target, [`${file} -> ${target}`]);
  }
  return graph;
}

/** Strongly connected components with more than one folder (Tarjan). */
export function cycles(graph: Map<string, Map<string, string[]>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const strong = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, idx.get(w) as number));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) strong(v);
  return out;
}

/** How a cycle's folders import each other (each edge inside it with one file import behind it). */
export function explain(graph: Map<string, Map<string, string[]>>, scc: string[]): string {
  const lines = [`cycle between ${scc.join(', ')}:`];
  for (const from of scc)
    for (const [to, via] of graph.get(from) ?? [])
      if (scc.includes(to)) lines.push(`  ${from} -> ${to} (${via.length}): ${via.slice(0, 3).join('; ')}`);
  return lines.join('\n');
}

/** Folders by layer: a folder sits one above the highest folder it imports (`MODULE_MAP=1` prints them). */
export function layers(graph: Map<string, Map<string, string[]>>): string[][] {
  const level = new Map<string, number>();
  const of = (v: string, path: Set<string>): number => {
    if (level.has(v)) return level.get(v) as number;
    if (path.has(v)) return 0; // a cycle: reported by the test below
    path.add(v);
    const deps = [...(graph.get(v)?.keys() ?? [])];
    const l = deps.length ? 1 + Math.max(...deps.map((d) => of(d, path))) : 0;
    path.delete(v);
    level.set(v, l);
    return l;
  };
  for (const v of graph.keys()) of(v, new Set());
  const out: string[][] = [];
  for (const [v, l] of level) (out[l] ??= []).push(v);
  return out.map((l) => l.sort());
}

/**
 * The module map of docs/architecture.md: one row per layer, top first, numbered; domain modules
 * by name, then (after `;`) config, database and cli, then the parts of src/common.
 */
export function renderModuleMap(rows: string[][]): string {
  const width = String(rows.length - 1).length;
  const lines = rows.map((folders, i) => {
    const modules = folders.filter((f) => f.startsWith('modules/')).map((f) => f.slice('modules/'.length));
    const common = folders.filter((f) => f.startsWith('common/'));
    const top = folders.filter((f) => !f.includes('/'));
    const cells = [modules, top, common]
      .filter((group) => group.length)
      .map((group) => group.join('  '))
      .join(';  ');
    return `${String(i).padStart(width)}  ${cells}`;
  });
  return ['```', ...lines.reverse(), '```'].join('\n');
}
