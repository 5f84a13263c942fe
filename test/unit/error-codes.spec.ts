import * as ts from 'typescript';
import { parse, tsFiles } from '../support/source-files';

/**
 * Every error code thrown in src is declared in an error table (a `*.errors.ts` file: the domain's
 * `{ code: status }` table, or src/common/errors/common.errors.ts for the generic helpers' codes),
 * so the tables are the list of what the service may answer. Codes are found where they are made:
 * `new DomainError(status, 'code', …)`, a domain helper `xError('code', …)` (bound by
 * `domainErrors(TABLE)`), and the generic helpers (any function with a `code` parameter, such as
 * `badRequest(message, extra, code = 'bad_request')`): the literal given, or the default.
 */

interface Found {
  code: string;
  at: string;
}

const files = tsFiles('src');
const sources = new Map(files.map((f) => [f, parse(f)]));
const where = (sf: ts.SourceFile, node: ts.Node) => `${sf.fileName}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`;
const literal = (node: ts.Node | undefined): string | null =>
  node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : null;
const calleeName = (e: ts.Expression): string | null =>
  ts.isIdentifier(e) ? e.text : ts.isPropertyAccessExpression(e) ? e.name.text : null;

/** Codes of the error tables: the numeric properties of the object literals of `*.errors.ts` files. */
function tableCodes(): Map<string, string> {
  const out = new Map<string, string>();
  for (const [file, sf] of sources) {
    if (!file.endsWith('.errors.ts')) continue;
    const visit = (node: ts.Node): void => {
      if (ts.isPropertyAssignment(node) && ts.isNumericLiteral(node.initializer) && ts.isObjectLiteralExpression(node.parent)) {
        const name = ts.isIdentifier(node.name) || ts.isStringLiteral(node.name) ? node.name.text : null;
        if (name) out.set(name, file);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out;
}

/**
 * Functions that make an error from a code they are given: `name` → the index of their `code`
 * parameter and its default. A function qualifies when it hands that `code` on to
 * `new DomainError(…)` or to another such function (found until nothing changes).
 */
function codeHelpers(): Map<string, { index: number; fallback: string | null }> {
  const out = new Map<string, { index: number; fallback: string | null }>();
  const candidates: Array<{ name: string; index: number; fallback: string | null; body: ts.Node }> = [];
  for (const sf of sources.values()) {
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const index = node.parameters.findIndex((p) => ts.isIdentifier(p.name) && p.name.text === 'code');
        const name =
          ts.isFunctionDeclaration(node) && node.name
            ? node.name.text
            : (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) &&
                ts.isVariableDeclaration(node.parent) &&
                ts.isIdentifier(node.parent.name)
              ? node.parent.name.text
              : null;
        if (index >= 0 && name) candidates.push({ name, index, fallback: literal(node.parameters[index].initializer), body: node.body });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  const passesCode = (body: ts.Node): boolean => {
    let found = false;
    const isCode = (a: ts.Node | undefined) => !!a && ts.isIdentifier(a) && a.text === 'code';
    const visit = (node: ts.Node): void => {
      if (ts.isNewExpression(node) && calleeName(node.expression) === 'DomainError' && isCode(node.arguments?.[1])) found = true;
      if (ts.isCallExpression(node)) {
        const h = out.get(calleeName(node.expression) ?? '');
        if (h && isCode(node.arguments[h.index])) found = true;
      }
      if (!found) ts.forEachChild(node, visit);
    };
    visit(body);
    return found;
  };
  for (let grew = true; grew;) {
    grew = false;
    for (const c of candidates)
      if (!out.has(c.name) && passesCode(c.body)) {
        out.set(c.name, { index: c.index, fallback: c.fallback });
        grew = true;
      }
  }
  return out;
}

/** Names bound to `domainErrors(TABLE)`: their first argument is a code of that table. */
function domainHelpers(): Set<string> {
  const out = new Set<string>();
  for (const sf of sources.values()) {
    const visit = (node: ts.Node): void => {
      if (
        ts.isVariableDeclaration(node) &&
        ts.isIdentifier(node.name) &&
        node.initializer &&
        ts.isCallExpression(node.initializer) &&
        calleeName(node.initializer.expression) === 'domainErrors'
      )
        out.add(node.name.text);
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out;
}

/** Every code thrown (made) in src, with where. */
function thrownCodes(): Found[] {
  const helpers = codeHelpers();
  const domain = domainHelpers();
  const out: Found[] = [];
  for (const sf of sources.values()) {
    const visit = (node: ts.Node): void => {
      if (ts.isNewExpression(node) && calleeName(node.expression) === 'DomainError') {
        const code = literal(node.arguments?.[1]);
        if (code) out.push({ code, at: where(sf, node) });
      } else if (ts.isCallExpression(node)) {
        const name = calleeName(node.expression);
        const helper = name ? helpers.get(name) : undefined;
        if (name && domain.has(name)) {
          const code = literal(node.arguments[0]);
          if (code) out.push({ code, at: where(sf, node) });
        } else if (helper) {
          const given = node.arguments[helper.index];
          const code = given ? literal(given) : helper.fallback;
          if (code) out.push({ code, at: where(sf, node) });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out;
}

describe('error codes', () => {
  const tables = tableCodes();
  const thrown = thrownCodes();

  it('reads the tables and the throws', () => {
    expect(tables.size).toBeGreaterThan(100);
    expect(thrown.length).toBeGreaterThan(300);
    expect(tables.get('plugin_not_found')).toBe('src/modules/plugins/plugins.errors.ts');
    expect(thrown.some((f) => f.code === 'bad_request')).toBe(true);
  });

  it('declares every thrown code in an error table', () => {
    const stray = thrown.filter((f) => !tables.has(f.code)).map((f) => `${f.code} (${f.at})`);
    expect(stray).toEqual([]);
  });
});
