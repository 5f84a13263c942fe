// @ts-check
// Lint keeps the shape described in docs/architecture.md: no import cycles, no lower layer importing a
// higher one, SQL only in repositories (and src/database/), no @Global domain modules.
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import prettier from 'eslint-config-prettier';

const SQL_OUTSIDE_REPOSITORY = {
  selector: "CallExpression[callee.property.name='query']",
  message: "SQL belongs in the owning module's <domain>.repository.ts (or src/database/).",
};
const ORM_OUTSIDE_REPOSITORY = {
  selector: 'CallExpression[callee.property.name=/^(repo|getRepository|createQueryBuilder)$/]',
  message: "TypeORM repositories and query builders belong in the owning module's <domain>.repository.ts (or src/database/).",
};
// repositories run SQL only through the bases' paths (src/database/company-scoped.repository.ts)
const RAW_SQL_IN_REPOSITORY = [
  {
    selector: "CallExpression[callee.property.name='query']",
    message: 'A repository runs SQL through its base: rows/row/returning (company first, or instance-wide) or unscoped(reason, …).',
  },
  {
    selector: "MemberExpression[property.name='dataSource']",
    message: 'No DataSource in a repository: use the base paths (opts.detached for outside the transaction).',
  },
  { selector: "CallExpression[callee.name='returningRows']", message: 'In a repository use returning(…) or unscopedReturning(reason, …).' },
];
// rows travel up as camelCase typed records: only repositories (and src/database/) see column names
const SNAKE_CASE = '/^[a-z][a-z0-9]*(_[a-z0-9]+)+$/';
const SNAKE_CASE_READS = [
  {
    selector: `MemberExpression[computed=false][property.name=${SNAKE_CASE}]`,
    message: 'A snake_case property is a column name: map the row to a camelCase record in its repository.',
  },
  {
    selector: `ObjectPattern > Property[key.name=${SNAKE_CASE}]`,
    message: 'A snake_case property is a column name: map the row to a camelCase record in its repository.',
  },
];
// files that parse a third party's snake_case wire format (a coding CLI's stream, a model API's usage, GitHub's
// REST answers) or name a library's snake_case export (cli-progress's presets): not rows
const WIRE_FORMAT_READERS = [
  'src/cli/progress.ts',
  'src/modules/adapters/cli-runtime.adapter.ts',
  'src/modules/adapters/runtimes/claude-local.runtime.ts',
  'src/modules/adapters/runtimes/codex-local.runtime.ts',
  'src/modules/adapters/runtimes/gemini-local.runtime.ts',
  'src/modules/adapters/runtimes/hello-probe.ts',
  'src/modules/skills/skill-sources.ts',
];
const GLOBAL_DOMAIN_MODULE = {
  selector: "Decorator[expression.callee.name='Global']",
  message: 'Domain modules are not @Global: consumers import the module they use.',
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '**/node_modules/**', '.test-build/**', '.tmp/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mjs', '**/*.js'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [importX.createNodeResolver({ extensions: ['.ts', '.js', '.json'] })],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // layers: database and common never depend on a domain module
    files: ['src/database/**/*.ts', 'src/config/**/*.ts', 'src/common/**/*.ts'],
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: ['./src/database', './src/config', './src/common'],
              from: './src/modules',
              message: 'A lower layer (database, config, common) must not import a domain module.',
            },
          ],
        },
      ],
    },
  },
  {
    // the issues read model does not import the modules that contribute to it (they register their part)
    files: ['src/modules/issues/**/*.ts'],
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: ['documents', 'attachments', 'artifacts'].map((m) => ({
            target: './src/modules/issues',
            from: `./src/modules/${m}`,
            message: `${m} imports issues and contributes its part of the issue read model through IssueReadContributions.`,
          })),
        },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/database/**', 'src/**/*.repository.ts'],
    rules: { 'no-restricted-syntax': ['error', SQL_OUTSIDE_REPOSITORY, ORM_OUTSIDE_REPOSITORY, ...SNAKE_CASE_READS] },
  },
  {
    files: WIRE_FORMAT_READERS,
    rules: { 'no-restricted-syntax': ['error', SQL_OUTSIDE_REPOSITORY, ORM_OUTSIDE_REPOSITORY] },
  },
  {
    files: ['src/**/*.repository.ts'],
    ignores: ['src/database/**'],
    rules: { 'no-restricted-syntax': ['error', ...RAW_SQL_IN_REPOSITORY] },
  },
  {
    files: ['src/modules/**/*.module.ts'],
    rules: { 'no-restricted-syntax': ['error', GLOBAL_DOMAIN_MODULE] },
  },
  {
    // plain JavaScript (fixtures, bench, examples run by node) and tests
    files: ['**/*.js', '**/*.cjs', 'test/**/*.ts', 'bench/**'],
    rules: { '@typescript-eslint/no-require-imports': 'off', '@typescript-eslint/no-explicit-any': 'off' },
    languageOptions: {
      globals: { require: 'readonly', module: 'writable', process: 'readonly', console: 'readonly', __dirname: 'readonly' },
    },
  },
  prettier,
);
