#!/usr/bin/env node
import 'reflect-metadata';
import { Command, CommanderError } from 'commander';
import { VERSION } from '../version';
import { registerBackup } from './commands/backup';
import { registerClaimAndToken } from './commands/claim-token';
import { registerDoctor } from './commands/doctor';
import { registerMigrate } from './commands/migrate';
import { registerPortability } from './commands/portability';
import { registerStatus } from './commands/status';

/**
 * `aos`, the operator CLI (bin of package.json; `npm run aos -- <command>` from a checkout). It
 * talks to the running service over its HTTP API (--url / SERVICE_URL, --token / SERVICE_TOKEN)
 * and to the database only where it must (migrate, restore, doctor, claim).
 */
export function buildProgram(): Command {
  const program = new Command('aos')
    .description('operate an agent orchestration service: health, backups, companies, credentials')
    .version(VERSION, '-V, --version')
    .option('--json', 'print the result as one JSON document on stdout (log lines go to stderr)')
    .option('--url <url>', 'base URL of the running service (default SERVICE_URL, else where the configuration listens)')
    .option('--token <token>', 'board API token for the API (default SERVICE_TOKEN; none needed in local_trusted mode)')
    .showHelpAfterError()
    .enablePositionalOptions(false);
  registerDoctor(program);
  registerStatus(program);
  registerMigrate(program);
  registerBackup(program);
  registerPortability(program);
  registerClaimAndToken(program);
  return program;
}

export async function runCli(argv: string[]): Promise<void> {
  const program = buildProgram().exitOverride();
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode;
      return;
    }
    throw err;
  }
}

if (require.main === module) {
  void runCli(process.argv.slice(2));
}
