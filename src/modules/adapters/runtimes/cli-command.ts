import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ProcessIdentity } from '../../../common/process/agent-identities';
import { unexecutableReason, unreadableReason } from '../../../common/process/agent-user';
import { findCommand } from '../child-process-run';

/**
 * Which coding-agent CLI binary a run starts. A command with a `/` (an agent's `adapterConfig.command`
 * path) is taken as it is. A bare name (`claude`, the default) is looked up in the operator's folders:
 * `SERVICE_CLI_PATH` first, then the service's PATH without the folders npm adds for package scripts
 * (`…/node_modules/.bin`, npm's own helpers): `npm start` puts the checkout's node_modules/.bin first on
 * PATH, and the CLIs there are the test suite's copies, not what the operator installed.
 */
export interface CliResolution {
  /** the command as configured (`claude`, `/opt/claude/bin/claude`) */
  command: string;
  /** the binary that would run, null when none was found */
  path: string | null;
  /** the folders looked in, in order (bare names only) */
  searched: string[];
}

/** A PATH entry npm adds while it runs a package script: never where an operator's CLI lives. */
export const isPackageScriptBin = (dir: string): boolean => dir.split(path.sep).includes('node_modules');

/** The folders a bare CLI name is looked up in: the configured folders, then PATH without npm's script folders. */
export function cliSearchPath(cliPath: readonly string[], envPath: string | undefined): string[] {
  const fromPath = (envPath ?? '').split(':').filter((d) => d && !isPackageScriptBin(d));
  return [...new Set([...cliPath, ...fromPath])];
}

export function resolveCliCommand(command: string, cliPath: readonly string[], envPath: string | undefined): CliResolution {
  if (command.includes('/')) return { command, path: findCommand(command), searched: [] };
  const searched = cliSearchPath(cliPath, envPath);
  return { command, path: findCommand(command, searched.join(':')), searched };
}

/** The binary a run starts: the path found for `command`, else `command` itself (the run's pre-flight then says it is missing). */
export const cliCommand = (command: string, cliPath: readonly string[], envPath: string | undefined): string =>
  resolveCliCommand(command, cliPath, envPath).path ?? command;

/**
 * Why `identity` could not start the binary (read it, enter its folders, execute it), or null. The
 * run's own pre-flight refuses the same binary with `adapter_command_not_accessible`. A Node script
 * (`#!/usr/bin/env node`, a `.js` file) needs its package folder readable too, which is that
 * package's concern; the file and its folders are what is checked here.
 */
export function cliAccessProblem(binary: string, identity: ProcessIdentity | null): string | null {
  if (!identity) return null;
  let real = binary;
  try {
    real = fs.realpathSync(binary);
  } catch {
    /* reported as not found elsewhere */
  }
  const paths = real === binary ? [binary] : [binary, real];
  for (const p of paths) {
    const problem = unreadableReason(p, identity) ?? unexecutableReason(p, identity);
    if (problem) return problem;
  }
  return null;
}
