import { runCli } from '../cli/main';

/** `node dist/src/database/restore-cli.js <file> [--database-url …]`: kept for scripts that call it; the same as `aos restore`. */
void runCli(['restore', ...process.argv.slice(2)]);
