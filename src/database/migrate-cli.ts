import { runCli } from '../cli/main';

/** `node dist/src/database/migrate-cli.js`: kept for scripts that call it; the same as `aos migrate`. */
void runCli(['migrate', ...process.argv.slice(2)]);
