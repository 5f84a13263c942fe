import * as os from 'node:os';
import type { Command } from 'commander';
import { VERSION } from '../../version';
import { ApiClient } from '../api-client';
import { action, CliContext, CliError } from '../cli-context';
import { Check, checkAgentIdentity, checkDatabase, checkDataDir, checkVersions } from './doctor-checks';

const MARK: Record<Check['status'], string> = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL', skip: 'skip' };

/**
 * `aos doctor`: is this configuration fit to run? Configuration, data directory, database
 * (reachable, migrated, secrets key), agent identity, versions, and the service itself. Exit 1
 * when a check fails. `--fix` applies the safe fixes (modes, missing directory, the agent identity folder).
 */
export async function doctor(ctx: CliContext, opts: { fix?: boolean }): Promise<number> {
  const fix = opts.fix === true;
  const checks: Check[] = [
    { name: 'version', status: 'ok', message: `service ${VERSION}, Node.js ${process.version}, ${os.platform()}-${os.arch()}` },
  ];
  // the data directory before the configuration: loading it must not change what is checked
  const dataDir = ctx.dataDir;
  checks.push(...checkDataDir(dataDir, fix));
  let config;
  try {
    config = ctx.loadConfig({}, { touchDataDir: false });
    checks.splice(1, 0, {
      name: 'config',
      status: 'ok',
      message: `valid: ${config.deploymentMode} on ${config.host}:${config.port}, database ${config.databaseUrl ? 'DATABASE_URL' : 'embedded'}, data in ${config.dataDir}`,
    });
  } catch (err) {
    checks.splice(1, 0, { name: 'config', status: 'fail', message: err instanceof CliError ? err.message : (err as Error).message });
  }
  if (config) {
    checks.push(...checkAgentIdentity(config, ctx.env, fix));
    const db = await checkDatabase(ctx, config);
    checks.push(...db.checks);
    checks.push(...(await checkVersions(config, db.serverVersion)));
  }
  checks.push(await checkService(ctx));
  const failed = checks.filter((c) => c.status === 'fail').length;
  const warned = checks.filter((c) => c.status === 'warn').length;
  const fixable = checks.filter((c) => c.fix && !c.fixed);
  const summary = failed ? `${failed} problems, ${warned} warnings` : warned ? `healthy, ${warned} warnings` : 'healthy';
  if (!ctx.interactive && !ctx.json) {
    for (const c of checks) {
      const fields = {
        check: c.name,
        status: c.status,
        ...(c.fix ? { fix: c.fix } : {}),
        ...(c.fixed !== undefined ? { fixed: c.fixed } : {}),
      };
      if (c.status === 'fail') ctx.log.error(fields, c.message);
      else if (c.status === 'warn') ctx.log.warn(fields, c.message);
      else ctx.log.info(fields, c.message);
    }
  }
  const lines = [
    ...checks.map((c) => `${MARK[c.status]} ${c.name}: ${c.message}${c.fix && !c.fixed ? ` (--fix: ${c.fix})` : ''}`),
    fixable.length && !fix ? `${summary}; \`aos doctor --fix\` would: ${fixable.map((c) => c.fix).join('; ')}` : summary,
  ];
  if (!ctx.interactive && !ctx.json) ctx.log.info({ healthy: failed === 0, problems: failed, warnings: warned }, lines[lines.length - 1]);
  else ctx.result({ healthy: failed === 0, checks }, lines);
  return failed ? 1 : 0;
}

/**
 * The service of this configuration: the one the data directory's listening.json names (unless
 * --url, SERVICE_URL, PORT or HOST name another place), and whether that is what answers.
 */
async function checkService(ctx: CliContext): Promise<Check> {
  const api = new ApiClient(ctx);
  const live = ctx.liveService();
  const ours = live ? `the service of ${ctx.dataDir} (pid ${live.pid}) listens on ${live.url}` : null;
  let health: { status: string; version: string; deploymentMode: string } | null = null;
  try {
    health = (
      await api.request<{ status: string; version: string; deploymentMode: string }>('GET', '/api/health', undefined, { allow: [503] })
    ).body;
  } catch {
    health = null;
  }
  const differs = !!live && live.url !== api.baseUrl;
  // PORT/HOST (or their defaults) pointing away from the data directory's service; an explicit
  // --url, SERVICE_URL or SERVICE_PUBLIC_URL may be another way to it (a proxy)
  const from = ctx.serviceUrl().from;
  const elsewhere = differs && (from === 'port' || from === 'default');
  const fix = elsewhere ? `: ${POINT}` : '';
  if (!health) {
    if (ours && differs) return { name: 'service', status: 'fail', message: `nothing answers at ${api.baseUrl}, but ${ours}${fix}` };
    if (ours) return { name: 'service', status: 'fail', message: `${ours} but does not answer` };
    return { name: 'service', status: 'skip', message: `no service of ${ctx.dataDir} is running (nothing answers at ${api.baseUrl})` };
  }
  const answer = `${api.baseUrl} answers: ${health.status} (version ${health.version}, ${health.deploymentMode})`;
  if (ours && elsewhere) return { name: 'service', status: 'fail', message: `${answer}, but ${ours}${fix}` };
  if (!ours)
    return {
      name: 'service',
      status: 'warn',
      message: `${answer}, but no service of ${ctx.dataDir} is running: another instance? (set SERVICE_DATA_DIR as it was started)`,
    };
  return { name: 'service', status: health.status === 'ok' ? 'ok' : 'warn', message: answer };
}

const POINT = 'set PORT and HOST as it was started, or --url (or unset them: the CLI then finds it)';

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description('check configuration, data directory, database, agent identity and versions; --fix repairs the safe ones')
    .option('--fix', 'apply the safe fixes (data directory and key modes, a missing data directory, the agent identity folder)')
    .action(action('doctor', doctor));
}
