// jest's transform of the .ts files: TypeScript's own transpileModule, file by file, with the options
// of tsconfig.json (it sets isolatedModules, so the code base is checked to compile file by file;
// `npm test` type-checks src and test before jest starts). Transpile only, as ts-jest did here
// (diagnostics off, isolatedModules), without ts-jest and its dependencies (8 MB).
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const root = path.join(__dirname, '..', '..');
const configPath = path.join(root, 'tsconfig.json');
const { options } = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, ts.sys.readFile).config, ts.sys, root);
const compilerOptions = {
  ...options,
  module: ts.ModuleKind.CommonJS,
  sourceMap: true,
  inlineSourceMap: false,
  inlineSources: true,
  declaration: false,
  noEmit: false,
  incremental: false,
  tsBuildInfoFile: undefined,
  outDir: undefined,
};
const configKey = crypto
  .createHash('sha256')
  .update(ts.version)
  .update(fs.readFileSync(configPath))
  .update(fs.readFileSync(__filename))
  .digest('hex');

module.exports = {
  process(source, fileName) {
    const out = ts.transpileModule(source, { compilerOptions, fileName, reportDiagnostics: false });
    return { code: out.outputText, map: out.sourceMapText };
  },
  getCacheKey(source, fileName, transformOptions) {
    return crypto
      .createHash('sha256')
      .update(configKey)
      .update(transformOptions?.configString ?? '')
      .update(fileName)
      .update('\0')
      .update(source)
      .digest('hex');
  },
};
