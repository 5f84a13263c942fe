import * as ts from 'typescript';
import { RECORD_TABLES, TABLE_OWNERS, type RecordKind } from '../../src/database/table-owners';
import { folderOf } from './import-graph';
import { parse, tsFiles } from './source-files';

/**
 * The ports of src, read from the source: a port is the class a `<name>.port.ts` exports (declared
 * by the lower module); a registration is what a class does with an object of another folder at
 * start-up (`onModuleInit`, outside the callbacks it registers): a call `this.<field>.<member>(…)`
 * of a `register…`, `add…`, `on…` or `set…` member, or an assignment `this.<field>.<member> = …`,
 * the field being a constructor parameter of that object's type.
 * test/unit/ports checks them; the Ports table of docs/architecture.md is rendered from them.
 *
 * The record-company registrations are generated from the owner map: `recordCompanies('<owner>')`
 * in a module's providers registers each kind of RECORD_TABLES whose table the owner owns, so each
 * such call stands for one registration per kind (the generator's own call is not counted).
 */
const GENERATOR = 'src/common/references/record-company.repository.ts';

export interface Port {
  name: string;
  file: string;
  folder: string;
}

export interface Registration {
  /** the type of the object registered with (a port's class name when it is a port) */
  target: string;
  /** the member called or set, with its first argument when that is a string literal: `register('skill')` */
  slot: string;
  /** `on…`/`add…` members take any number of listeners; every other slot takes exactly one registration */
  hook: boolean;
  file: string;
  line: number;
  folder: string;
  /** the folder the target's type is imported from */
  targetFolder: string | null;
  /** a registration generated from the owner map: the owner `recordCompanies(…)` named */
  generatedFor?: string;
}

const REGISTERING = /^(register|add|on|set)([A-Z]|$)/;

/** The folder of an import specifier of `file` (relative imports only). */
function importedFolder(file: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const parts = file.split('/').slice(0, -1);
  for (const p of spec.split('/')) {
    if (p === '..') parts.pop();
    else if (p !== '.') parts.push(p);
  }
  return folderOf(`${parts.join('/')}.ts`);
}

/** Every exported class of a `*.port.ts` file of src. */
export function ports(): Port[] {
  const out: Port[] = [];
  for (const file of tsFiles('src').filter((f) => f.endsWith('.port.ts'))) {
    for (const s of parse(file).statements) {
      if (ts.isClassDeclaration(s) && s.name && s.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword))
        out.push({ name: s.name.text, file, folder: folderOf(file) as string });
    }
  }
  return out;
}

/** The start-up registrations of every class of src with an `onModuleInit`. */
export function registrations(): Registration[] {
  const out: Registration[] = [];
  for (const file of tsFiles('src')) {
    if (file === GENERATOR) continue;
    const source = parse(file);
    out.push(...generated(file, source));
    if (!source.text.includes('onModuleInit')) continue;
    const importedFrom = new Map<string, string | null>();
    for (const s of source.statements) {
      if (!ts.isImportDeclaration(s) || !ts.isStringLiteral(s.moduleSpecifier)) continue;
      const bindings = s.importClause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings))
        for (const el of bindings.elements) importedFrom.set(el.name.text, importedFolder(file, s.moduleSpecifier.text));
    }
    const visitClass = (cls: ts.ClassDeclaration): void => {
      const fieldTypes = new Map<string, string>();
      for (const m of cls.members) {
        if (!ts.isConstructorDeclaration(m)) continue;
        for (const p of m.parameters)
          if (p.modifiers?.length && ts.isIdentifier(p.name) && p.type && ts.isTypeReferenceNode(p.type))
            fieldTypes.set(p.name.text, p.type.typeName.getText(source));
      }
      const init = cls.members.find((m) => ts.isMethodDeclaration(m) && m.name.getText(source) === 'onModuleInit') as
        ts.MethodDeclaration | undefined;
      if (!init?.body) return;
      const record = (node: ts.Node, access: ts.PropertyAccessExpression, firstArg?: ts.Expression, assignment = false): void => {
        const holder = access.expression;
        if (!ts.isPropertyAccessExpression(holder) || holder.expression.kind !== ts.SyntaxKind.ThisKeyword) return;
        const target = fieldTypes.get(holder.name.text);
        const member = access.name.text;
        if (!target || !(assignment || REGISTERING.test(member))) return;
        const slot = firstArg && ts.isStringLiteral(firstArg) ? `${member}('${firstArg.text}')` : member;
        out.push({
          target,
          slot,
          hook: /^(on|add)([A-Z]|$)/.test(member),
          file,
          line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
          folder: folderOf(file) as string,
          targetFolder: importedFrom.get(target) ?? null,
        });
      };
      const visit = (node: ts.Node): void => {
        if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) record(node, node.expression, node.arguments[0]);
        if (
          ts.isBinaryExpression(node) &&
          node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
          ts.isPropertyAccessExpression(node.left)
        )
          record(node, node.left, undefined, true);
        // what a registered callback does when it runs is not a registration
        if (!ts.isFunctionLike(node)) ts.forEachChild(node, visit);
      };
      visit(init.body);
    };
    const walk = (node: ts.Node): void => {
      if (ts.isClassDeclaration(node)) visitClass(node);
      ts.forEachChild(node, walk);
    };
    walk(source);
  }
  return out;
}

/** The registrations a file's `recordCompanies('<owner>')` calls stand for: one per kind the owner's tables hold. */
function generated(file: string, source: ts.SourceFile): Registration[] {
  const out: Registration[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'recordCompanies' &&
      node.arguments.length === 1 &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      const owner = node.arguments[0].text;
      for (const [kind, table] of Object.entries(RECORD_TABLES) as Array<[RecordKind, keyof typeof TABLE_OWNERS]>) {
        if (TABLE_OWNERS[table].owner !== owner) continue;
        out.push({
          target: 'RecordCompanyResolvers',
          slot: `register('${kind}')`,
          hook: false,
          file,
          line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
          folder: folderOf(file) as string,
          targetFolder: 'common/references',
          generatedFor: owner,
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  if (source.text.includes('recordCompanies(')) visit(source);
  return out;
}

/** Registrations on an object of another folder: the ones the port rule is about. */
export function crossFolder(regs: Registration[]): Registration[] {
  return regs.filter((r) => r.targetFolder !== null && r.targetFolder !== r.folder);
}

const short = (folder: string) => folder.replace(/^modules\//, '');

/** The Ports table of docs/architecture.md: each port, who declares it, and who registers each slot. */
export function renderPorts(all: Port[], regs: Registration[]): string {
  const lines = ['| port | declared in | registered by (slot: module) |', '|---|---|---|'];
  for (const p of [...all].sort((a, b) => a.file.localeCompare(b.file))) {
    const bySlot = new Map<string, Registration[]>();
    for (const r of regs.filter((r) => r.target === p.name)) bySlot.set(r.slot, [...(bySlot.get(r.slot) ?? []), r]);
    const cells = [...bySlot]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([slot, rs]) => `\`${slot}\`${rs[0].hook ? ' (hook)' : ''}: ${[...new Set(rs.map((r) => short(r.folder)))].sort().join(', ')}`);
    lines.push(`| \`${p.name}\` | \`${p.file.replace(/^src\//, '')}\` | ${cells.join('; ') || 'none'} |`);
  }
  return lines.join('\n');
}
