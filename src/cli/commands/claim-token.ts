import type { Command } from 'commander';
import { generateToken, sha256Hex } from '../../common/auth/tokens';
import { ApiClient } from '../api-client';
import { action, CliContext, CliError } from '../cli-context';
import { openDatabase, withClient } from '../cli-database';
import { CliRepository } from '../cli.repository';

/** as the service's own start-up claim (BoardClaimService) */
const CLAIM_VALIDITY_HOURS = 24;

/**
 * `aos claim`: the board-claim link of an instance without an owner. The link printed at start-up
 * cannot be read back (only its hash is stored), so a fresh one is issued in the database; it
 * works once, for 24 hours, like the start-up one. An owned or local_trusted instance needs none.
 */
export async function claim(ctx: CliContext): Promise<number> {
  const config = ctx.loadConfig();
  if (config.deploymentMode !== 'authenticated') {
    ctx.result(
      { claimUrl: null, reason: 'local_trusted' },
      'local_trusted mode: the local board owns the instance; there is nothing to claim',
    );
    return 0;
  }
  const db = await openDatabase(ctx, config);
  try {
    return await withClient(db.url, async (c) => {
      const repo = new CliRepository(c);
      if (await repo.hasInstanceAdmin()) {
        ctx.result({ claimUrl: null, reason: 'owned' }, 'this instance already has an owner: nothing to claim');
        return 0;
      }
      const token = generateToken('bc');
      const expiresAt = await repo.insertClaim(sha256Hex(token), CLAIM_VALIDITY_HOURS);
      const statusUrl = `${ctx.globals.url?.replace(/\/+$/, '') ?? config.publicUrl}/api/board-claim/${token}`;
      const claimUrl = `${statusUrl}/claim`;
      ctx.result(
        { claimUrl, statusUrl, expiresAt: expiresAt.toISOString() },
        [
          `Board claim link (works once, until ${expiresAt.toISOString()}):`,
          claimUrl,
          `Sign in (or sign up) in a browser, then POST to the link; GET ${statusUrl} shows its status.`,
        ],
        { secret: true },
      );
      return 0;
    });
  } finally {
    await db.close();
  }
}

interface CreatedToken {
  id: string;
  name: string;
  tokenPrefix: string;
  expiresAt: string | null;
  token: string;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/**
 * `aos token create`: a board API token (`svc_bt_…`) for scripts, created over the API as the
 * caller: --token / SERVICE_TOKEN, or a user signed in for the occasion with --email and a password
 * (SERVICE_PASSWORD or --password-stdin; the session is ended after). Shown once.
 */
export async function createToken(
  ctx: CliContext,
  opts: { name: string; expiresDays?: string; email?: string; passwordStdin?: boolean },
): Promise<number> {
  const expiresInDays = opts.expiresDays === undefined ? undefined : Number(opts.expiresDays);
  if (expiresInDays !== undefined && !(Number.isInteger(expiresInDays) && expiresInDays >= 1 && expiresInDays <= 3650))
    throw new CliError('--expires-days must be an integer from 1 to 3650', 'usage');
  let session: string | undefined;
  if (opts.email) {
    const password = opts.passwordStdin ? await readStdin() : ctx.env.SERVICE_PASSWORD;
    if (!password) throw new CliError('--email needs a password: SERVICE_PASSWORD or --password-stdin', 'usage');
    const signIn = await new ApiClient(ctx, '').post<{ token: string }>('/api/auth/sign-in/email', { email: opts.email, password });
    session = signIn.token;
  }
  const api = new ApiClient(ctx, session);
  try {
    const t = await api.post<CreatedToken>('/api/auth/board-tokens', { name: opts.name, ...(expiresInDays ? { expiresInDays } : {}) });
    ctx.result(
      { id: t.id, name: t.name, tokenPrefix: t.tokenPrefix, expiresAt: t.expiresAt, token: t.token },
      [`board token "${t.name}" (${t.id}${t.expiresAt ? `, expires ${t.expiresAt}` : ', no expiry'}), shown once:`, t.token],
      { secret: true },
    );
    return 0;
  } finally {
    if (session) await api.post('/api/auth/sign-out').catch(() => undefined);
  }
}

export async function listTokens(ctx: CliContext): Promise<number> {
  const tokens = await new ApiClient(ctx).get<
    Array<{ id: string; name: string; tokenPrefix: string; expiresAt: string | null; revokedAt: string | null }>
  >('/api/auth/board-tokens');
  ctx.result(
    tokens,
    tokens.length
      ? tokens.map(
          (t) => `${t.id}  ${t.tokenPrefix}…  ${t.name}${t.revokedAt ? ' (revoked)' : t.expiresAt ? ` (expires ${t.expiresAt})` : ''}`,
        )
      : 'no board tokens',
  );
  return 0;
}

export async function revokeToken(ctx: CliContext, id: string): Promise<number> {
  const t = await new ApiClient(ctx).post<{ id: string; name: string; revokedAt: string }>(
    `/api/auth/board-tokens/${encodeURIComponent(id)}/revoke`,
  );
  ctx.result(t, `board token ${t.id} (${t.name}) revoked at ${t.revokedAt}`);
  return 0;
}

export function registerClaimAndToken(program: Command): void {
  program
    .command('claim')
    .description('print a board-claim link for an instance without an owner (authenticated mode)')
    .action(action('claim', claim));
  const token = program.command('token').description('board API tokens (over the API)');
  token
    .command('create')
    .description('create a board API token (shown once)')
    .requiredOption('--name <name>', 'what the token is for')
    .option('--expires-days <days>', 'days until it expires (1-3650; default: no expiry)')
    .option('--email <email>', 'sign in as this user for the occasion (password: SERVICE_PASSWORD or --password-stdin)')
    .option('--password-stdin', 'read the password from standard input')
    .action(action('token', createToken));
  token.command('list').description("the caller's board tokens (never the tokens themselves)").action(action('token', listTokens));
  token
    .command('revoke')
    .description("revoke one of the caller's board tokens")
    .argument('<id>', 'token id')
    .action(action('token', revokeToken));
}
