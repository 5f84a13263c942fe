import { INestApplication, ValidationError, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { AppModule } from './app.module';
import express, { NextFunction, Request, Response } from 'express';
import { DomainError } from './common/errors/domain-error';
import { bodyParserError } from './common/errors/http-exception.filter';
import { AppConfig } from './config/app-config';
import { dataSourceOptions, runMigrations } from './database/data-source';
import { setupOpenApi } from './openapi';

export interface CreateAppOptions {
  config: AppConfig;
  databaseUrl: string;
  /** run timers (heartbeat scheduler, reapers); tests turn them off unless they test them */
  scheduler?: boolean;
  /** run pending migrations first (the test template is migrated already) */
  migrate?: boolean;
  poolSize?: number;
}

export interface ValidationFieldError {
  field: string;
  messages: string[];
}

function flatten(errors: ValidationError[], parent = ''): ValidationFieldError[] {
  return errors.flatMap((e) => {
    const field = parent ? `${parent}.${e.property}` : e.property;
    const own = e.constraints ? [{ field, messages: Object.values(e.constraints) }] : [];
    return [...own, ...flatten(e.children ?? [], field)];
  });
}

/** The one place the Nest app is configured; main.ts and the tests both use it. */
export async function createApp(opts: CreateAppOptions): Promise<{ app: NestExpressApplication; dataSource: DataSource }> {
  const dataSource = new DataSource(dataSourceOptions(opts.databaseUrl, opts.poolSize));
  await dataSource.initialize();
  try {
    if (opts.migrate !== false) await runMigrations(dataSource);
    const app = await NestFactory.create<NestExpressApplication>(
      AppModule.register(opts.config, dataSource, { scheduler: opts.scheduler ?? true }),
      { bufferLogs: true, bodyParser: false },
    );
    app.useLogger(app.get(Logger));
    configureApp(app);
    await app.init();
    return { app, dataSource };
  } catch (err) {
    await dataSource.destroy().catch(() => undefined);
    throw err;
  }
}

export function configureApp(app: NestExpressApplication): void {
  app.setGlobalPrefix('api');
  app.disable('x-powered-by');
  app.set('etag', false); // no conditional GETs in this API; hashing every body costs ~3% of a list request
  app.set('query parser', 'extended');
  // JSON bodies up to 1 MiB (documents allow 512 KiB of markdown); strict: objects and arrays only
  app.use(express.json({ limit: '1mb', strict: true }));
  app.use(express.urlencoded({ extended: false, limit: '64kb' }));
  app.use((err: unknown, _req: Request, _res: Response, next: NextFunction) => next(bodyParserError(err as { type?: string }) ?? err));
  app.useGlobalPipes(
    new ValidationPipe({
      whitelist: true,
      transform: true,
      transformOptions: { enableImplicitConversion: false },
      exceptionFactory: (errors) => {
        const fields = flatten(errors);
        const summary = fields.map((f) => f.messages.join(', ')).join('; ');
        return new DomainError(400, 'validation_failed', `Validation failed: ${summary}`, { fields });
      },
    }),
  );
  setupOpenApi(app);
}

export async function closeApp(app: INestApplication, dataSource: DataSource): Promise<void> {
  await app.close();
  if (dataSource.isInitialized) await dataSource.destroy();
}
