import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client } from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { closeApp, createApp } from '../../src/app';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { withDatabase } from './global-setup';

export interface TestApp {
  app: NestFastifyApplication;
  http: ReturnType<typeof request>;
  config: AppConfig;
  dataSource: DataSource;
  databaseUrl: string;
  dataDir: string;
  /** base URL when started with listen: true */
  baseUrl?: string;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** listen on a real port (for child processes and HTTP adapters calling back) */
  listen?: boolean;
  scheduler?: boolean;
  /** reuse an existing database (second instance on one database) */
  databaseUrl?: string;
}

/** A fresh database cloned from the migrated template. */
export async function createTestDatabase(): Promise<string> {
  const admin = process.env.TEST_PG_ADMIN_URL;
  const template = process.env.TEST_PG_TEMPLATE;
  if (!admin || !template) throw new Error('test database not set up (jest globalSetup)');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const client = new Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  } finally {
    await client.end();
  }
  return withDatabase(admin, name);
}

/** Boots the real app (the same createApp() as main) on its own database and data directory. */
export async function createTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const databaseUrl = opts.databaseUrl ?? (await createTestDatabase());
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-data-'));
  const config = loadConfig({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...(process.env.SERVICE_AGENT_ROOT ? { SERVICE_AGENT_ROOT: process.env.SERVICE_AGENT_ROOT } : {}),
    SERVICE_DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    PORT: '0',
    ...opts.env,
  });
  const { app, dataSource } = await createApp({
    config,
    databaseUrl,
    scheduler: opts.scheduler ?? false,
    migrate: false,
    poolSize: 10,
    // written by jest's globalSetup (scripts/openapi-metadata.js)
    openApiMetadata: () => require('../../.tmp/openapi-metadata.generated').default(),
  });
  let baseUrl: string | undefined;
  if (opts.listen) {
    await app.listen(0, '127.0.0.1');
    const addr = app.getHttpServer().address() as { port: number };
    baseUrl = `http://127.0.0.1:${addr.port}`;
    config.publicUrl = baseUrl;
    config.port = addr.port;
  }
  return {
    app,
    http: request(app.getHttpServer()),
    config,
    dataSource,
    databaseUrl,
    dataDir,
    baseUrl,
    async close() {
      await closeApp(app, dataSource);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
