import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { ensureBuiltDir } from './service-process';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as one JSON document (--json), or undefined */
  json: any;
  /** stdout parsed as JSON log lines */
  lines(): Array<Record<string, any>>;
}

/** Runs the built `aos` CLI (src/cli/main.js of dist/, or of the tests' build when dist/ is stale) with `env` only (plus PATH and HOME), stdin from `input`. */
export async function aos(args: string[], env: Record<string, string> = {}, input?: string): Promise<CliRun> {
  const cli = path.join(await ensureBuiltDir(), 'src', 'cli', 'main.js');
  const child = spawn(process.execPath, [cli, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.end(input ?? '');
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  let json: any;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return {
    code,
    stdout,
    stderr,
    json,
    lines: () =>
      stdout
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}

/** fetch against a service with an optional bearer, JSON in and out. */
export async function call(
  baseUrl: string,
  method: string,
  url: string,
  body?: unknown,
  token?: string,
): Promise<{ status: number; body: any }> {
  const res = await fetch(baseUrl + url, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
