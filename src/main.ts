import 'reflect-metadata';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import type pino from 'pino';
import { agentIdentityWarning } from './common/process/agent-user';
import { AppConfig, ConfigError, loadConfig } from './config/app-config';
import { localUrlOf, removeListening, writeListening } from './config/listening-file';
import type { EmbeddedPostgres } from './database/embedded-postgres';
import { createRootLogger, nestLoggerFor } from './logger';
import { startTracing, stopTracing } from './common/tracing/tracing';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** `host:port` of the bound socket (0.0.0.0 stays 0.0.0.0), IPv6 in brackets. */
function boundAddress(address: AddressInfo | string | null): string {
  if (!address || typeof address === 'string') return String(address);
  return `${address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`;
}

/**
 * Whether the port can be bound, tried before anything is initialised (no initdb, no migrations
 * for an instance that cannot listen): the error message, or null.
 */
function portProblem(port: number, host: string): Promise<string | null> {
  if (port === 0) return Promise.resolve(null);
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', (err: NodeJS.ErrnoException) =>
      resolve(
        err.code === 'EADDRINUSE'
          ? `port ${port} on ${host} is already in use (another instance?); set PORT`
          : `cannot listen on ${host}:${port}: ${err.message}`,
      ),
    );
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(null)));
  });
}

async function main(): Promise<void> {
  // the root logger exists before the configuration, so that even a configuration error is a log line
  const envLevel = process.env.LOG_LEVEL?.trim();
  const root: pino.Logger = createRootLogger(envLevel && LEVELS.includes(envLevel) ? envLevel : 'info');
  Logger.overrideLogger(nestLoggerFor(root));
  const fatal = (msg: string): never => {
    root.fatal({ context: 'Bootstrap' }, msg);
    // the fatal line is the last one: what the way down logs (Nest, the pool, Postgres) is not
    root.level = 'silent';
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
  const inUse = await portProblem(config.port, config.host);
  if (inUse) return fatal(inUse);
  if (config.databaseUrl) {
    // before the application loads: an unreachable database is named, in seconds
    const { databaseUrlProblem } = await import('./database/database-url');
    const unreachable = await databaseUrlProblem(config.databaseUrl);
    if (unreachable) return fatal(unreachable);
  }
  const logger = new Logger('Bootstrap');
  const isolationWarning = agentIdentityWarning(config.agentIdentity.isolate);
  if (isolationWarning) logger.warn(isolationWarning);
  let embedded: EmbeddedPostgres | undefined;
  const shutdownDb = async () => {
    await embedded?.stop().catch(() => undefined);
  };
  // a signal during start-up stops the embedded database too
  let closeApp: (() => Promise<void>) | undefined;
  let drain: ((abort: Promise<unknown>) => Promise<unknown>) | undefined;
  let closing = false;
  let secondSignal: () => void = () => undefined;
  const aborted = new Promise<void>((r) => (secondSignal = r));
  const shutdown = async (signal: string) => {
    if (closing) {
      // a second signal ends the drain: live runs are handed back at once
      secondSignal();
      return;
    }
    closing = true;
    logger.log(`${signal} received, shutting down`);
    await drain?.(aborted).catch((err: Error) => logger.error(`drain failed: ${err.message}`));
    await closeApp?.().catch(() => undefined);
    removeListening(config.dataDir);
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
    const [{ createApp }, { resolveDatabase }, { BoardClaimService }, { RunDispatcher }] = await Promise.all([
      import('./app'),
      import('./database/database-url'),
      import('./modules/users/board-claim.service'),
      import('./modules/heartbeat/run-dispatcher.service'),
    ]);
    const db = await resolveDatabase(config, (m) => logger.log(m));
    embedded = db.embedded;
    const { app, dataSource } = await createApp({ config, databaseUrl: db.url, logger: root });
    closeApp = async () => {
      await app.close().catch(() => undefined);
      await dataSource.destroy().catch(() => undefined);
    };
    // graceful drain (SERVICE_SHUTDOWN_GRACE_SEC): runs finish instead of being re-run after the restart
    drain = (abort) => app.get(RunDispatcher, { strict: false }).drain(config.shutdownGraceSec * 1000, abort);
    if (closing) return;
    await app.listen(config.port, config.host);
    const address = app.getHttpServer().address();
    const bound = boundAddress(address);
    if (address && typeof address !== 'string') {
      // where the CLI finds the instance of this data directory (aos doctor, status, backup, ...)
      try {
        writeListening(config.dataDir, localUrlOf(address.address, address.port));
      } catch (err) {
        logger.warn(`cannot record the listening address in ${config.dataDir}: ${(err as Error).message}`);
      }
    }
    logger.log(
      `listening on http://${bound} (${config.deploymentMode}); API docs at ${config.publicUrl}/api/docs; data in ${config.dataDir}`,
    );
    const claim = app.get(BoardClaimService, { strict: false }).takeStartupNotice();
    if (claim) root.warn({ context: 'BoardClaim', claimUrl: claim.claimUrl }, claim.message);
  } catch (err) {
    root.fatal({ context: 'Bootstrap' }, `start-up failed: ${(err as Error).message}`);
    root.level = 'silent';
    await closeApp?.().catch(() => undefined);
    await shutdownDb();
    process.exit(1);
  }
}

void main();
