import * as fs from 'node:fs';
import type { EmbeddedPostgres } from '../../src/database/embedded-postgres';

export default async function globalTeardown(): Promise<void> {
  const g = globalThis as { __EMBEDDED_PG__?: EmbeddedPostgres; __PG_DIR__?: string; __AGENTS_ROOT__?: string; __FIXTURES_DIR__?: string };
  if (g.__FIXTURES_DIR__) fs.rmSync(g.__FIXTURES_DIR__, { recursive: true, force: true });
  if (g.__AGENTS_ROOT__) fs.rmSync(g.__AGENTS_ROOT__, { recursive: true, force: true });
  await g.__EMBEDDED_PG__?.stop();
  if (g.__PG_DIR__) fs.rmSync(g.__PG_DIR__, { recursive: true, force: true });
}
