#!/usr/bin/env node
/**
 * Builds the service into dist/: the TypeScript compiler with the @nestjs/swagger compiler plugin
 * (it adds the DTO and response schemas of the OpenAPI document), what `nest build` did, without the
 * 70 MB of the Nest CLI. `npm run build`; `npm ci` runs it as `prepare`.
 *
 *   node scripts/build.js                 build tsconfig.build.json into dist/ (emptied first)
 *   node scripts/build.js --out <dir>     into <dir> instead (the tests' .test-build/)
 *   node scripts/build.js --watch         rebuild on change and (re)start node dist/src/main.js
 *   node scripts/build.js --if-installed  as `prepare`: skip (exit 0, one line) when TypeScript is
 *                                         not installed (`npm ci --omit=dev`: the compiler is a
 *                                         development dependency; build dist/ with a full install)
 *
 * Type errors fail the build (exit 1), as they did with `nest build`.
 */
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');

/** The swagger plugin's options (also read by scripts/openapi-metadata.js for the test app). */
const swaggerPluginOptions = { introspectComments: true, classValidatorShim: true, dtoFileNameSuffix: ['.dto.ts'] };

const installed = (name) => {
  try {
    require.resolve(name, { paths: [root] });
    return true;
  } catch {
    return false;
  }
};

/** tsconfig.build.json, parsed, with outDir (and the build info file beside it) moved when asked. */
function parseConfig(ts, outDir) {
  const configPath = path.join(root, 'tsconfig.build.json');
  const overrides = outDir ? { outDir, tsBuildInfoFile: path.join(outDir, 'tsconfig.tsbuildinfo') } : {};
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, overrides, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: fail(ts) });
  if (parsed.errors.length) fail(ts)(parsed.errors);
  return parsed;
}

const formatHost = (ts) => ({
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: () => root,
  getNewLine: () => ts.sys.newLine,
});

const fail = (ts) => (diagnostics) => {
  const list = Array.isArray(diagnostics) ? diagnostics : [diagnostics];
  process.stderr.write(ts.formatDiagnosticsWithColorAndContext(list, formatHost(ts)));
  throw new BuildError(`Found ${list.length} error(s).`);
};

class BuildError extends Error {}

const transformers = (program) => {
  const swagger = require(require.resolve('@nestjs/swagger/plugin', { paths: [root] }));
  return { before: [swagger.before(swaggerPluginOptions, program)] };
};

/** One build of tsconfig.build.json into `outDir` (default: the config's, dist/), emptied first. */
function build({ outDir } = {}) {
  const ts = require(require.resolve('typescript', { paths: [root] }));
  const { options, fileNames, projectReferences } = parseConfig(ts, outDir && path.resolve(root, outDir));
  fs.rmSync(options.outDir, { recursive: true, force: true });
  const program = ts.createIncrementalProgram({ rootNames: fileNames, projectReferences, options });
  const emitted = program.emit(undefined, undefined, undefined, undefined, transformers(program.getProgram()));
  const diagnostics = ts.getPreEmitDiagnostics(program.getProgram()).concat(emitted.diagnostics);
  if (diagnostics.length) fail(ts)(diagnostics);
  return options.outDir;
}

/** `--watch`: the compiler's watch mode with the plugin; after each clean build, the service restarts. */
function watch() {
  const ts = require(require.resolve('typescript', { paths: [root] }));
  const { options } = parseConfig(ts);
  let child = null;
  const restart = () => {
    const start = () => {
      child = spawn(process.execPath, [path.join(options.outDir, 'src', 'main.js')], { cwd: root, stdio: 'inherit' });
      child.on('exit', () => (child = null));
    };
    if (!child) return start();
    child.once('exit', start);
    child.kill('SIGTERM');
  };
  const host = ts.createWatchCompilerHost(
    path.join(root, 'tsconfig.build.json'),
    { preserveWatchOutput: true },
    ts.sys,
    ts.createEmitAndSemanticDiagnosticsBuilderProgram,
    undefined,
    (diagnostic, _newLine, _options, errorCount) => {
      process.stdout.write(`${ts.flattenDiagnosticMessageText(diagnostic.messageText, ts.sys.newLine)}\n`);
      if (errorCount === 0) restart();
    },
  );
  const emit = (program) => {
    const original = program.emit;
    program.emit = (file, write, token, dtsOnly, custom) =>
      original(file, write, token, dtsOnly, {
        ...custom,
        before: [...(custom?.before ?? []), ...transformers(program.getProgram()).before],
      });
  };
  const afterCreate = host.afterProgramCreate;
  host.afterProgramCreate = (program) => {
    emit(program);
    afterCreate?.(program);
  };
  ts.createWatchProgram(host);
  for (const signal of ['SIGINT', 'SIGTERM'])
    process.on(signal, () => {
      if (child) child.once('exit', () => process.exit(0)).kill(signal);
      else process.exit(0);
    });
}

module.exports = { build, swaggerPluginOptions };

if (require.main === module) {
  const args = process.argv.slice(2);
  const arg = (name) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  if (args.includes('--if-installed') && !installed('typescript')) {
    process.stdout.write('prepare: TypeScript is not installed (npm ci --omit=dev), dist/ not built: build it with a full `npm ci`\n');
    process.exit(0);
  }
  if (args.includes('--watch')) watch();
  else {
    try {
      build({ outDir: arg('--out') });
    } catch (err) {
      process.stderr.write(`${err instanceof BuildError ? err.message : err.stack}\n`);
      process.exit(1);
    }
  }
}
