import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Command } from 'commander';
import * as tar from 'tar';
import { ApiClient } from '../api-client';
import { action, CliContext, CliError } from '../cli-context';
import { progressBar, withSpinner } from '../progress';

interface ExportOptions {
  out?: string;
  dir?: boolean;
  issues?: boolean;
}

/**
 * `aos export <companyId>`: the company as a package (agentcompanies/v1 markdown) over the API:
 * a `.tar.gz` (POST /api/companies/:id/exports) or, with --dir, the files in a folder
 * (POST /api/companies/:id/export). Never secret values, keys, runs, costs or activity.
 */
export async function exportCompany(ctx: CliContext, companyId: string, opts: ExportOptions): Promise<number> {
  const api = new ApiClient(ctx);
  const body = { include: { issues: opts.issues === true } };
  const enc = encodeURIComponent(companyId);
  if (opts.dir) {
    const r = await withSpinner(
      ctx,
      'exporting',
      api.post<{ files: Record<string, string>; warnings: string[] }>(`/api/companies/${enc}/export`, body),
    );
    const dir = path.resolve(opts.out ?? `company-${companyId}`);
    if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0) throw new CliError(`${dir} is not empty`, 'file_exists');
    for (const [rel, text] of Object.entries(r.files)) {
      const target = path.resolve(dir, rel);
      if (!target.startsWith(dir + path.sep)) throw new CliError(`the package names a path outside its folder: ${rel}`, 'bad_package');
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, text);
    }
    for (const w of r.warnings) ctx.log.warn(w);
    ctx.result(
      { dir, files: Object.keys(r.files).length, warnings: r.warnings },
      `exported ${Object.keys(r.files).length} files to ${dir}`,
    );
    return 0;
  }
  const res = await api.stream('POST', `/api/companies/${enc}/exports`, body);
  const named = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1];
  const file = path.resolve(opts.out ?? named ?? `company-${companyId}.tar.gz`);
  if (fs.existsSync(file)) throw new CliError(`${file} exists; choose another --out`, 'file_exists');
  const bar = progressBar(ctx, 'export', 'bytes');
  let bytes = 0;
  const source = Readable.fromWeb(res.body as unknown as WebReadableStream<Uint8Array>);
  source.on('data', (chunk: Buffer) => bar.update((bytes += chunk.length), bytes));
  try {
    await pipeline(source, fs.createWriteStream(file, { flags: 'wx' }));
  } finally {
    bar.stop();
  }
  ctx.result({ file, sizeBytes: bytes }, `exported to ${file} (${bytes} bytes)`);
  return 0;
}

/** The text files of a package folder or `.tar.gz`, keyed by path (a single top folder, as exports have, is stripped). */
async function readPackage(source: string): Promise<Record<string, string>> {
  let dir = path.resolve(source);
  let tmp: string | undefined;
  if (!fs.existsSync(dir)) throw new CliError(`no such file or folder: ${source}`, 'file_not_found');
  if (fs.statSync(dir).isFile()) {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-import-'));
    try {
      await tar.x({ file: dir, cwd: tmp, strict: true, preservePaths: false });
    } catch (err) {
      fs.rmSync(tmp, { recursive: true, force: true });
      throw new CliError(`${source} is not a package archive (.tar.gz): ${(err as Error).message}`, 'bad_package');
    }
    dir = tmp;
  }
  try {
    const files: Record<string, string> = {};
    const walk = (d: string) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.isFile()) files[path.relative(dir, p).split(path.sep).join('/')] = fs.readFileSync(p, 'utf8');
      }
    };
    walk(dir);
    const tops = new Set(Object.keys(files).map((k) => k.split('/')[0]));
    const [top] = [...tops];
    if (tops.size === 1 && Object.keys(files).every((k) => k.startsWith(`${top}/`))) {
      return Object.fromEntries(Object.entries(files).map(([k, v]) => [k.slice(top.length + 1), v]));
    }
    return files;
  } finally {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  }
}

interface ImportOptions {
  name?: string;
  into?: string;
  collision?: string;
  dryRun?: boolean;
}

interface Plan {
  mode: string;
  companyId: string | null;
  companyName: string;
  counts: Record<string, number>;
  warnings: string[];
  secretsToSet: Array<{ name: string }>;
}

/**
 * `aos import <package>`: a package folder or `.tar.gz` into a new company (default; --name
 * renames it) or an existing one (--into), over the board's import routes; --dry-run shows the
 * plan only.
 */
export async function importCompany(ctx: CliContext, source: string, opts: ImportOptions): Promise<number> {
  const files = await readPackage(source);
  if (Object.keys(files).length === 0) throw new CliError(`${source} holds no files`, 'bad_package');
  const body = {
    source: { type: 'inline', files },
    target: opts.into
      ? { mode: 'existing_company', companyId: opts.into }
      : { mode: 'new_company', ...(opts.name ? { newCompanyName: opts.name } : {}) },
    ...(opts.collision ? { collisionStrategy: opts.collision } : {}),
  };
  const api = new ApiClient(ctx);
  const route = opts.dryRun ? '/api/companies/import/preview' : '/api/companies/import';
  const plan = await withSpinner(
    ctx,
    opts.dryRun ? 'planning' : 'importing',
    api.post<Plan & { ids?: Record<string, Record<string, string>> }>(route, body),
  );
  for (const w of plan.warnings) ctx.log.warn(w);
  const counts = Object.entries(plan.counts)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  ctx.result(plan, [
    `${opts.dryRun ? 'would import' : 'imported'} ${Object.keys(files).length} files into ${plan.mode === 'new_company' ? 'new company' : 'company'} "${plan.companyName}"${plan.companyId ? ` (${plan.companyId})` : ''}: ${counts || 'nothing'}`,
    ...(plan.secretsToSet.length ? [`secrets to set: ${plan.secretsToSet.map((s) => s.name).join(', ')}`] : []),
  ]);
  return 0;
}

export function registerPortability(program: Command): void {
  program
    .command('export')
    .description('export a company as a package (.tar.gz, or a folder with --dir) over the API')
    .argument('<companyId>', 'the company')
    .option('--out <path>', 'file (default: the name the service gives) or folder (with --dir)')
    .option('--dir', 'write the package files into a folder instead of an archive')
    .option('--issues', 'include issues with their documents and comments')
    .action(action('export', exportCompany));
  program
    .command('import')
    .description('import a package (.tar.gz or folder) into a new company, or an existing one with --into')
    .argument('<package>', 'a .tar.gz from `export`, or a package folder')
    .option('--name <name>', "name of the new company (default: the package's)")
    .option('--into <companyId>', 'import into this existing company')
    .option('--collision <strategy>', 'rename (default), skip or replace entities whose slug exists')
    .option('--dry-run', 'show what the import would do, change nothing')
    .action(action('import', importCompany));
}
