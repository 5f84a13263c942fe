import { ClaudeLocalRuntime } from './claude-local.runtime';
import { CodexLocalRuntime } from './codex-local.runtime';
import { GeminiLocalRuntime } from './gemini-local.runtime';
import { OpenCodeLocalRuntime } from './opencode-local.runtime';
import type { CliSpec } from './coding-cli-kit';
import type { CodingCliRuntime } from './coding-cli.runtime';

/**
 * The coding-agent CLIs, one line each: the runtime file says the rest (type, label, config
 * fields, skills, tracing name, providers, environment test; see docs/runtimes.md, "Adding a
 * coding CLI").
 */
const RUNTIMES = [ClaudeLocalRuntime, CodexLocalRuntime, GeminiLocalRuntime, OpenCodeLocalRuntime];

/** A fresh instance of each coding CLI runtime (the executors register theirs). */
export function codingCliRuntimes(): CodingCliRuntime[] {
  return RUNTIMES.map((Runtime) => new Runtime());
}

const SPECS = new Map(codingCliRuntimes().map((r) => [r.type, r.spec]));

/** What a coding CLI's runtime file declares, by adapter type; null for any other type. */
export function codingCliSpec(type: string): CliSpec | null {
  return SPECS.get(type) ?? null;
}
