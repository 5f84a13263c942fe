#!/usr/bin/env node
// Writes the @nestjs/swagger plugin's metadata (DTO properties from TypeScript types and JSDoc) to
// .tmp/openapi-metadata.generated.ts (git-ignored). The build (scripts/build.js) applies the plugin
// at compile time; jest transpiles the sources file by file (test/support/ts-transform.js), which
// cannot, so the in-process test app loads this file instead (jest globalSetup runs this script).
// It is written outside src/ so that it never makes the build (dist/) look older than the sources.
// The committed docs/openapi.json is made from the built service, not from this (scripts/openapi.js).
'use strict';
const path = require('node:path');
const crypto = require('node:crypto');
const fs = require('node:fs');
const { ReadonlyVisitor } = require('@nestjs/swagger/plugin');
const ts = require('typescript');
const { swaggerPluginOptions } = require('./build');

const root = path.join(__dirname, '..');
process.chdir(root);
const outputDir = path.join(root, '.tmp');
const filename = 'openapi-metadata.generated.ts';
fs.mkdirSync(outputDir, { recursive: true });

// The generator type-checks all of src (7-8 s, 11 s of CPU): skipped when the file was made from the
// same sources, build settings and plugin version (a digest of them is kept beside it).
const sources = (dir) =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
const digest = crypto.createHash('sha256');
for (const f of [
  ...sources(path.join(root, 'src')),
  'scripts/build.js',
  'tsconfig.json',
  'tsconfig.build.json',
  'package-lock.json',
  __filename,
])
  digest
    .update(`${path.relative(root, path.resolve(root, f))}\0`)
    .update(fs.readFileSync(path.resolve(root, f)))
    .update('\0');
const made = digest.digest('hex');
const digestFile = path.join(outputDir, `${filename}.sha256`);
const current = (file) => {
  try {
    return fs.existsSync(path.join(outputDir, filename)) && fs.readFileSync(file, 'utf8') === made;
  } catch {
    return false;
  }
};
if (current(digestFile)) process.exit(0);
fs.rmSync(digestFile, { force: true });
writeMetadata(new ReadonlyVisitor({ ...swaggerPluginOptions, pathToSource: path.join(root, 'src'), readonly: true }));
// the generator writes imports relative to the sources (pathToSource); the file lives in .tmp/
const file = path.join(outputDir, filename);
fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/import\("\.\//g, 'import("../src/'));
fs.writeFileSync(digestFile, made);

/**
 * What the Nest CLI's PluginMetadataGenerator and PluginMetadataPrinter did: the visitor walks every
 * source of tsconfig.build.json's program, and its collected metadata is printed as
 * `export default async () => { const t = { ...type imports }; return { '@nestjs/swagger': … } }`.
 */
function writeMetadata(visitor) {
  const parsed = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.build.json'), undefined, ts.sys);
  const program = ts.createProgram({ rootNames: parsed.fileNames, projectReferences: parsed.projectReferences, options: parsed.options });
  // a full type check first, as the CLI's generator did: union members (enums) come out in the
  // order the checker met their types, and the served document must not change with the tool
  ts.getPreEmitDiagnostics(program);
  for (const sf of program.getSourceFiles()) if (!sf.isDeclarationFile) visitor.visit(program, sf);
  const f = ts.factory;
  const assign = (key, meta) =>
    f.createPropertyAssignment(
      f.createStringLiteral(key),
      Array.isArray(meta)
        ? f.createArrayLiteralExpression(
            meta.map(([importExpr, m]) =>
              f.createArrayLiteralExpression([importExpr, f.createObjectLiteralExpression(Object.keys(m).map((k) => assign(k, m[k])))]),
            ),
          )
        : ts.isObjectLiteralExpression(meta)
          ? meta
          : f.createObjectLiteralExpression(Object.keys(meta).map((k) => assign(k, meta[k]))),
    );
  const typeImports = visitor.typeImports;
  const imports = f.createVariableStatement(
    undefined,
    f.createVariableDeclarationList(
      [
        f.createVariableDeclaration(
          f.createIdentifier('t'),
          undefined,
          undefined,
          f.createObjectLiteralExpression(
            Object.keys(typeImports).map((ti) =>
              f.createPropertyAssignment(f.createComputedPropertyName(f.createStringLiteral(ti)), f.createIdentifier(typeImports[ti])),
            ),
            true,
          ),
        ),
      ],
      ts.NodeFlags.Const | ts.NodeFlags.AwaitContext | ts.NodeFlags.ContextFlags | ts.NodeFlags.TypeExcludesFlags,
    ),
  );
  const body = f.createObjectLiteralExpression([assign(visitor.key, visitor.collect())]);
  const exported = f.createExportAssignment(
    undefined,
    undefined,
    f.createArrowFunction(
      [f.createToken(ts.SyntaxKind.AsyncKeyword)],
      undefined,
      [],
      undefined,
      f.createToken(ts.SyntaxKind.EqualsGreaterThanToken),
      f.createBlock([imports, f.createReturnStatement(body)], true),
    ),
  );
  const printed = ts
    .createPrinter({ newLine: ts.NewLineKind.LineFeed })
    .printNode(ts.EmitHint.Unspecified, exported, ts.createSourceFile('file.ts', '', ts.ScriptTarget.Latest, false, ts.ScriptKind.TS));
  fs.writeFileSync(path.join(outputDir, filename), `/* eslint-disable */\n${printed}`);
}
