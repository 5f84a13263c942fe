import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createApp } from './app';
import { agentUserWarning } from './common/process/agent-user';
import { AppConfig, ConfigError, loadConfig } from './config/app-config';
import { resolveDatabase } from './database/database-url';
import { EmbeddedPostgres } from './database/embedded-postgres';

async function main(): Promise<void> {
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = new Logger('Bootstrap');
  const isolationWarning = agentUserWarning(config.agentUser);
  if (isolationWarning) logger.warn(isolationWarning);
  let embedded: EmbeddedPostgres | undefined;
  const shutdownDb = async () => {
    await embedded?.stop().catch(() => undefined);
  };
  try {
    const db = await resolveDatabase(config, (m) => logger.log(m));
    embedded = db.embedded;
    const { app, dataSource } = await createApp({ config, databaseUrl: db.url });
    let closing = false;
    const shutdown = async (signal: string) => {
      if (closing) return;
      closing = true;
      logger.log(`${signal} received, shutting down`);
      await app.close().catch(() => undefined);
      await dataSource.destroy().catch(() => undefined);
      await shutdownDb();
      process.exit(0);
    };
    process.on('SIGTERM', () => void shutdown('SIGTERM'));
    process.on('SIGINT', () => void shutdown('SIGINT'));
    await app.listen(config.port, config.host);
    const url = await app.getUrl();
    logger.log(`listening on ${url.replace('[::1]', 'localhost')} (${config.deploymentMode}); API docs at ${config.publicUrl}/api/docs; data in ${config.dataDir}`);
  } catch (err) {
    logger.error(`start-up failed: ${(err as Error).message}`);
    await shutdownDb();
    process.exit(1);
  }
}

void main();
