#!/usr/bin/env node
// Writes the @nestjs/swagger plugin's metadata (DTO properties from TypeScript types and JSDoc) to
// src/openapi-metadata.generated.ts (git-ignored). `nest build` applies the plugin at compile time; the
// tests run the sources through ts-jest, which cannot, so they load this file instead (jest
// globalSetup runs this script). Served OpenAPI in tests then equals the built service's.
'use strict';
const path = require('node:path');
const { PluginMetadataGenerator } = require('@nestjs/cli/lib/compiler/plugins/plugin-metadata-generator');
const { ReadonlyVisitor } = require('@nestjs/swagger/plugin');

const root = path.join(__dirname, '..');
process.chdir(root);
const options = require(path.join(root, 'nest-cli.json')).compilerOptions.plugins.find((p) => p.name === '@nestjs/swagger').options;
new PluginMetadataGenerator().generate({
  visitors: [new ReadonlyVisitor({ ...options, pathToSource: path.join(root, 'src') })],
  outputDir: path.join(root, 'src'),
  filename: 'openapi-metadata.generated.ts',
  watch: false,
  tsconfigPath: 'tsconfig.build.json', // resolved from the working directory

  printDiagnostics: false,
});
