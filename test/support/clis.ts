import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { readableForAgents } from './readable-for-agents';

/**
 * The coding-agent CLIs the tests run, pinned in scripts/test-clis.js and installed by the test
 * setup into a cache folder (not by `npm ci`). `claudeBinary()`, `codexBinary()`, `geminiBinary()`
 * and `opencodeBinary()` (beside their fakes) answer through here.
 */
export type TestCli = 'claude' | 'codex' | 'gemini' | 'opencode';

interface TestClis {
  binaryOf(name: TestCli): { bin: string; pkgRoot: string };
  isInstalled(name: TestCli): boolean;
  ensureTestClis(names?: TestCli[], log?: (line: string) => void): Promise<Record<TestCli, string>>;
}

const SCRIPT = path.join(__dirname, '..', '..', 'scripts', 'test-clis.js');
const clis = require(SCRIPT) as TestClis;

/** Installs every pinned CLI that is not in the cache yet (jest's global setup). */
export const ensureTestClis = (log?: (line: string) => void): Promise<Record<TestCli, string>> => clis.ensureTestClis(undefined, log);

/**
 * The file to run for a pinned CLI, as a path the agents' uids can run (see readableForAgents).
 * Installed here when the global setup has not (`TEST_CLIS=on-demand`, or a cache emptied meanwhile).
 */
export function testCliBinary(name: TestCli): string {
  if (!clis.isInstalled(name)) execFileSync(process.execPath, [SCRIPT, name], { stdio: 'pipe', timeout: 900_000 });
  const { bin, pkgRoot } = clis.binaryOf(name);
  return readableForAgents(bin, pkgRoot);
}
