#!/usr/bin/env node
// Writes the @nestjs/swagger plugin's metadata (DTO properties from TypeScript types and JSDoc) to
// .tmp/openapi-metadata.generated.ts (git-ignored). `nest build` applies the plugin at compile time;
// the tests run the sources through ts-jest, which cannot, so the in-process test app loads this
// file instead (jest globalSetup runs this script). It is written outside src/ so that it never
// makes the build (dist/) look older than the sources. The committed docs/openapi.json is made
// from the built service, not from this (scripts/openapi.js).
'use strict';
const path = require('node:path');
const { PluginMetadataGenerator } = require('@nestjs/cli/lib/compiler/plugins/plugin-metadata-generator');
const fs = require('node:fs');
const { ReadonlyVisitor } = require('@nestjs/swagger/plugin');

const crypto = require('node:crypto');

const root = path.join(__dirname, '..');
process.chdir(root);
const options = require(path.join(root, 'nest-cli.json')).compilerOptions.plugins.find((p) => p.name === '@nestjs/swagger').options;
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
  'nest-cli.json',
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
new PluginMetadataGenerator().generate({
  visitors: [new ReadonlyVisitor({ ...options, pathToSource: path.join(root, 'src') })],
  outputDir,
  filename,
  watch: false,
  tsconfigPath: 'tsconfig.build.json', // resolved from the working directory

  printDiagnostics: false,
});
// the generator writes imports relative to the sources (pathToSource); the file lives in .tmp/
const file = path.join(outputDir, filename);
fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/import\("\.\//g, 'import("../src/'));
fs.writeFileSync(digestFile, made);
