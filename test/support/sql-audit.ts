import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import * as ts from 'typescript';
import { TABLE_OWNERS, TableOwner } from '../../src/database/table-owners';

/**
 * Reads every repository's SQL the way a reviewer would: each statement, the path it runs through
 * (company-scoped, instance-wide, `unscoped` with a reason, or a raw query), the tables it reads
 * and writes, and whether those belong to the repository's own module (src/database/table-owners.ts).
 * The TypeORM paths count as statements too: `ormIn(companyId, Entity)` reads (scoped),
 * `unscopedOrm(reason, Entity)` reads (unscoped) and `orm(Entity)` whole-entity writes (`orm`), each
 * on its entity's table; their text is a stand-in (`/* orm *\/ SELECT … FROM <table>`).
 */
export type StatementPath = 'scoped' | 'instance' | 'unscoped' | 'raw' | 'orm';

export interface AuditedStatement {
  file: string;
  /** for a TypeORM path: the entity class named */
  entity?: string;
  line: number;
  /** the repository's module: the folder under src/modules, `common/<part>`, or `cli` */
  module: string;
  path: StatementPath;
  reason: string | null;
  /** the statement's text, `${…}` kept as written; null when it is built somewhere the audit cannot follow */
  sql: string | null;
  tables: string[];
  writes: string[];
}

const OWNERS: Record<string, TableOwner> = TABLE_OWNERS;
const SCOPED_METHODS = new Set(['rows', 'row', 'returning']);
const UNSCOPED_METHODS = new Set(['unscoped', 'unscopedRow', 'unscopedReturning']);

function repositoryFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...repositoryFiles(path));
    else if (name.endsWith('.repository.ts')) out.push(path);
  }
  return out;
}

function moduleOf(rel: string): string {
  const parts = rel.split(sep);
  if (parts[1] === 'modules') return parts[2];
  if (parts[1] === 'common') return `common/${parts[2]}`;
  return parts[1];
}

/** The text of a SQL argument: literals, templates, consts of the same file, `a ? b : c`, `a + b`. */
function sqlText(node: ts.Expression, consts: Map<string, ts.Expression>, depth = 0): string | null {
  if (depth > 8) return null;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) {
    let text = node.head.text;
    for (const span of node.templateSpans) {
      const inner = sqlText(span.expression, consts, depth + 1);
      text += (inner ?? `\${${span.expression.getText()}}`) + span.literal.text;
    }
    return text;
  }
  if (ts.isParenthesizedExpression(node)) return sqlText(node.expression, consts, depth + 1);
  if (ts.isIdentifier(node)) {
    const init = consts.get(node.text);
    return init ? sqlText(init, consts, depth + 1) : null;
  }
  if (ts.isConditionalExpression(node)) {
    const a = sqlText(node.whenTrue, consts, depth + 1);
    const b = sqlText(node.whenFalse, consts, depth + 1);
    return a === null && b === null ? null : `${a ?? ''} /* or */ ${b ?? ''}`;
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const a = sqlText(node.left, consts, depth + 1);
    const b = sqlText(node.right, consts, depth + 1);
    return a === null && b === null ? null : `${a ?? ''}${b ?? ''}`;
  }
  return null;
}

const TABLE_REF = /\b(?:from|join|update|into)\s+"?([a-z_][a-z0-9_]*)"?/gi;
const WRITE_REF = /\b(?:update|insert\s+into|delete\s+from)\s+"?([a-z_][a-z0-9_]*)"?/gi;

function tablesIn(sql: string, re: RegExp): string[] {
  const found = new Set<string>();
  for (const m of sql.matchAll(re)) {
    const name = m[1].toLowerCase();
    if (OWNERS[name]) found.add(name);
  }
  return [...found];
}

/** The base class a class extends, by name. */
function baseOf(cls: ts.ClassLikeDeclaration | undefined): string | null {
  const clause = cls?.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword);
  return clause ? clause.types[0].expression.getText() : null;
}

/** Entity class name → its table and whether it has a `companyId` column (every `@Entity('…')` under src). */
export function entityTables(root: string): Map<string, { table: string; companyColumn: boolean }> {
  const out = new Map<string, { table: string; companyColumn: boolean }>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) {
        const text = readFileSync(path, 'utf8');
        for (const m of text.matchAll(/@Entity\('(\w+)'\)\s*export class (\w+)/g)) {
          out.set(m[2], { table: m[1], companyColumn: /\bcompanyId\s*[:!?]/.test(text) });
        }
      }
    }
  };
  walk(join(root, 'src'));
  return out;
}

const ORM_METHODS: Record<string, { path: StatementPath; entityArg: number; reasonArg?: number; sql: (t: string) => string }> = {
  orm: { path: 'orm', entityArg: 0, sql: (t) => `/* orm */ INSERT INTO ${t}` },
  ormIn: { path: 'scoped', entityArg: 1, sql: (t) => `/* orm */ SELECT * FROM ${t}` },
  unscopedOrm: { path: 'unscoped', entityArg: 1, reasonArg: 0, sql: (t) => `/* orm */ SELECT * FROM ${t}` },
};

export function auditRepositories(root: string): AuditedStatement[] {
  const out: AuditedStatement[] = [];
  const entities = entityTables(root);
  for (const file of repositoryFiles(join(root, 'src'))) {
    const rel = relative(root, file);
    if (rel.startsWith(`src${sep}database${sep}`)) continue;
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
    const consts = new Map<string, ts.Expression>();
    const visitConsts = (node: ts.Node): void => {
      if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) consts.set(node.name.text, node.initializer);
      ts.forEachChild(node, visitConsts);
    };
    visitConsts(source);

    const record = (node: ts.CallExpression, path: StatementPath, sqlArg: ts.Expression | undefined, reasonArg?: ts.Expression) => {
      const sql = sqlArg ? sqlText(sqlArg, consts) : null;
      out.push({
        file: rel,
        line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
        module: moduleOf(rel),
        path,
        reason: reasonArg ? sqlText(reasonArg, consts) : null,
        sql,
        tables: sql ? tablesIn(sql, TABLE_REF) : [],
        writes: sql ? tablesIn(sql, WRITE_REF) : [],
      });
    };

    const visit = (node: ts.Node, cls: ts.ClassLikeDeclaration | undefined): void => {
      if (ts.isClassLike(node)) cls = node;
      if (ts.isCallExpression(node)) {
        const callee = node.expression;
        const args = node.arguments;
        if (ts.isPropertyAccessExpression(callee)) {
          const method = callee.name.text;
          const onThis = callee.expression.kind === ts.SyntaxKind.ThisKeyword;
          const orm = onThis ? ORM_METHODS[method] : undefined;
          if (orm) {
            const entity = args[orm.entityArg]?.getText() ?? '';
            const table = entities.get(entity)?.table;
            record(
              node,
              orm.path,
              table ? ts.factory.createStringLiteral(orm.sql(table)) : undefined,
              orm.reasonArg === undefined ? undefined : args[orm.reasonArg],
            );
            out[out.length - 1].entity = entity;
          } else if (onThis && UNSCOPED_METHODS.has(method)) record(node, 'unscoped', args[1], args[0]);
          else if (onThis && SCOPED_METHODS.has(method)) {
            const base = baseOf(cls);
            if (base === 'CompanyScopedRepository') record(node, 'scoped', args[1]);
            else if (base === 'InstanceRepository') record(node, 'instance', args[0]);
          } else if (method === 'query') record(node, 'raw', args[0]);
          else if (method === 'repo' || method === 'getRepository' || method === 'createQueryBuilder') record(node, 'raw', undefined);
        } else if (ts.isIdentifier(callee) && callee.text === 'returningRows') record(node, 'raw', args[1]);
      }
      ts.forEachChild(node, (child) => visit(child, cls));
    };
    visit(source, undefined);
  }
  return out;
}

/** Whether the statement names its tenant: the company-scoped path (checked at run time), or the column in its text. */
export function namesCompany(s: AuditedStatement, entities?: Map<string, { companyColumn: boolean }>): boolean {
  if (s.path === 'scoped' || s.path === 'unscoped') return true;
  // a whole-entity write carries the company in its own column (or is the company itself)
  if (s.path === 'orm') return s.tables.includes('companies') || !!(s.entity && entities?.get(s.entity)?.companyColumn);
  return s.sql !== null && /\bcompany_id\b/.test(s.sql);
}

/** Company-owned tables a statement touches. */
export function companyTables(s: AuditedStatement): string[] {
  return s.tables.filter((t) => OWNERS[t].company !== null);
}

/** Tables the statement touches that its module does not own. */
export function foreignTables(s: AuditedStatement, tables: string[] = s.tables): string[] {
  return tables.filter((t) => OWNERS[t].owner !== s.module);
}
