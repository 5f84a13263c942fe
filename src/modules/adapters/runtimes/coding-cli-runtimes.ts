import { ClaudeLocalRuntime } from './claude-local.runtime';
import { CodexLocalRuntime } from './codex-local.runtime';
import { GeminiLocalRuntime } from './gemini-local.runtime';
import { OpenCodeLocalRuntime } from './opencode-local.runtime';
import type { CodingCliRuntime } from './coding-cli.runtime';

/** The coding-agent CLIs under the board UI's type names. */
export function codingCliRuntimes(): CodingCliRuntime[] {
  return [new ClaudeLocalRuntime(), new CodexLocalRuntime(), new GeminiLocalRuntime(), new OpenCodeLocalRuntime()];
}

export const CODING_CLI_TYPES = codingCliRuntimes().map((r) => r.type);
