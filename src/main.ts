import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import type pino from 'pino';
import { agentUserWarning } from './common/process/agent-user';
import { AppConfig, ConfigError, loadConfig } from './config/app-config';
import type { EmbeddedPostgres } from './database/embedded-postgres';
import { createRootLogger, nestLoggerFor } from './logger';
import { startTracing, stopTracing } from './common/tracing/tracing';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** `host:port` of the bound socket (0.0.0.0 stays 0.0.0.0), IPv6 in brackets. */
function boundAddress(address: AddressInfo | string | null): string {
  if (!address || typeof address === 'string') return String(address);
  return `${address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`;
}

async function main(): Promise<void> {
  // the root logger exists before the configuration, so that even a configuration error is a log line
  const envLevel = process.env.LOG_LEVEL?.trim();
  const root: pino.Logger = createRootLogger(envLevel && LEVELS.includes(envLevel) ? envLevel : 'info');
  Logger.overrideLogger(nestLoggerFor(root));
  const fatal = (msg: string): never => {
    root.fatal({ context: 'Bootstrap' }, msg);
    process.exit(1);
  };
  process.on('uncaughtException', (err) => fatal(`uncaught exception: ${err.stack ?? err.message}`));
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) return fatal(`Configuration error: ${err.message}`);
    return fatal(`start-up failed: ${(err as Error).message}`);
  }
  const logger = new Logger('Bootstrap');
  const isolationWarning = agentUserWarning(config.agentUser);
  if (isolationWarning) logger.warn(isolationWarning);
  let embedded: EmbeddedPostgres | undefined;
  const shutdownDb = async () => {
    await embedded?.stop().catch(() => undefined);
  };
  // a signal during start-up stops the embedded database too
  let closeApp: (() => Promise<void>) | undefined;
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal} received, shutting down`);
    await closeApp?.().catch(() => undefined);
    await stopTracing();
    await shutdownDb();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  try {
    // before the application graph: the instrumentations patch http and pg as they load (and
    // nothing of OpenTelemetry loads unless the OTEL_* variables ask for traces)
    if (await startTracing(process.env)) logger.log('OpenTelemetry traces on (OTEL_* environment)');
    // the application graph loads after the configuration is known good: a bad one fails at once
    const [{ createApp }, { resolveDatabase }, { BoardClaimService }] = await Promise.all([
      import('./app'),
      import('./database/database-url'),
      import('./modules/users/board-claim.service'),
    ]);
    const db = await resolveDatabase(config, (m) => logger.log(m));
    embedded = db.embedded;
    const { app, dataSource } = await createApp({ config, databaseUrl: db.url, logger: root });
    closeApp = async () => {
      await app.close().catch(() => undefined);
      await dataSource.destroy().catch(() => undefined);
    };
    if (closing) return;
    await app.listen(config.port, config.host);
    const bound = boundAddress(app.getHttpServer().address());
    logger.log(
      `listening on http://${bound} (${config.deploymentMode}); API docs at ${config.publicUrl}/api/docs; data in ${config.dataDir}`,
    );
    const claim = app.get(BoardClaimService, { strict: false }).takeStartupNotice();
    if (claim) root.warn({ context: 'BoardClaim', claimUrl: claim.claimUrl }, claim.message);
  } catch (err) {
    root.fatal({ context: 'Bootstrap' }, `start-up failed: ${(err as Error).message}`);
    await shutdownDb();
    process.exit(1);
  }
}

void main();
