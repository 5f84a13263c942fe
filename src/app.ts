import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import fastifyMultipart from '@fastify/multipart';
import { INestApplication, RequestMethod } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Logger } from 'nestjs-pino';
import type pino from 'pino';
import * as qs from 'qs';
import { DataSource } from 'typeorm';
import { AppModule } from './app.module';
import { DomainError } from './common/errors/domain-error';
import { registerInputGuard } from './common/http/input-guard';
import { RequestValidationPipe } from './common/http/validation.pipe';
import { registerOversizeBodyDrain } from './common/http/oversize-body';
import { registerTraceRoutes } from './common/tracing/tracing-http';
import { AppConfig } from './config/app-config';
import { dataSourceOptions, runMigrations } from './database/data-source';
import { createRootLogger, nestLoggerFor, requestId } from './logger';
import { allowLargePackageBodies } from './modules/portability/body-limit';
import { setupOpenApi } from './openapi';

export interface CreateAppOptions {
  config: AppConfig;
  databaseUrl: string;
  /** run timers (heartbeat scheduler, reapers); tests turn them off unless they test them */
  scheduler?: boolean;
  /** run pending migrations first (the test template is migrated already) */
  migrate?: boolean;
  poolSize?: number;
  /** the process's root logger (main.ts creates it before the config is read); one per app otherwise */
  logger?: pino.Logger;
  /**
   * The swagger plugin's DTO metadata, for builds that did not apply the plugin at compile time
   * (jest transpiles the sources file by file; see scripts/openapi-metadata.js).
   */
  openApiMetadata?: () => Promise<Record<string, unknown>>;
}

/** The one place the Nest app is configured; main.ts and the tests both use it. */
export async function createApp(opts: CreateAppOptions): Promise<{ app: NestFastifyApplication; dataSource: DataSource }> {
  const dataSource = new DataSource(dataSourceOptions(opts.databaseUrl, opts.poolSize));
  await dataSource.initialize();
  try {
    if (opts.migrate !== false) await runMigrations(dataSource);
    const root = opts.logger ?? createRootLogger(opts.config.logLevel);
    const app = await NestFactory.create<NestFastifyApplication>(
      AppModule.register(opts.config, dataSource, { scheduler: opts.scheduler ?? true, logger: root }),
      createHttpAdapter(opts.config),
      { logger: nestLoggerFor(root), bodyParser: false },
    );
    app.useLogger(app.get(Logger));
    if (opts.openApiMetadata) await SwaggerModule.loadPluginMetadata(opts.openApiMetadata);
    await configureApp(app);
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
    return { app, dataSource };
  } catch (err) {
    await dataSource.destroy().catch(() => undefined);
    throw err;
  }
}

const JSON_BODY_LIMIT = 1024 * 1024; // documents allow 512 KiB of markdown

/**
 * The HTTP layer is Fastify (its router and request objects cost far less per request than
 * Express's; see the README's Performance section). Paths ignore a trailing slash, query strings
 * are parsed with `qs` (`a[b]=1` nests), the proxy header is trusted only as SERVICE_TRUST_PROXY says, and bodies are at most 1 MiB (multipart uploads have their
 * own limit, see SingleFileUploadInterceptor).
 */
function createHttpAdapter(config: AppConfig): FastifyAdapter {
  return new FastifyAdapter({
    bodyLimit: JSON_BODY_LIMIT,
    // client addresses (request.ip: sign-in limits, sessions) from X-Forwarded-For only behind a trusted proxy
    trustProxy: config.trustProxy,
    genReqId: requestId,
    // errors Fastify's router raises before any route runs, in our error shape (the path is not echoed)
    frameworkErrors: (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
      const [status, code, error] =
        err.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? [414, 'uri_too_long', 'A path parameter is too long']
          : [400, 'bad_request', 'Malformed URL (invalid percent-encoding)'];
      void reply.status(status).header('X-Request-Id', req.id).send({ error, code });
    },
    // long path parameters reach validation (a 400 that names them) instead of a bare 404
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048, querystringParser: (str: string) => qs.parse(str) },
  });
}

const malformedJson = () => new DomainError(400, 'malformed_json', 'Malformed JSON body');

/**
 * JSON bodies: objects and arrays only (a bare string or number is malformed), an empty body reads
 * as `{}`, and `__proto__`/`constructor.prototype` keys are refused (Fastify's secure parser).
 */
function registerJsonParser(fastify: FastifyInstance): void {
  const secureParse = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser(['application/json', 'text/plain']); // text bodies: 415
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, {});
    if (text[0] !== '{' && text[0] !== '[') return done(malformedJson(), undefined);
    secureParse(req, text, (err, value) => (err ? done(malformedJson(), undefined) : done(null, value)));
  });
}

export async function configureApp(app: NestFastifyApplication): Promise<void> {
  // the front page (GET /) is the one route outside /api
  app.setGlobalPrefix('api', { exclude: [{ path: '/', method: RequestMethod.GET }] });
  const fastify = app.getHttpAdapter().getInstance();
  registerJsonParser(fastify);
  registerInputGuard(fastify);
  registerOversizeBodyDrain(fastify);
  allowLargePackageBodies(fastify);
  await app.register(fastifyFormbody, { bodyLimit: 64 * 1024 });
  await app.register(fastifyCookie);
  // uploads are read by SingleFileUploadInterceptor, which applies the per-request limits
  await app.register(fastifyMultipart);
  registerTraceRoutes(fastify);
  fastify.addHook('onRequest', (req: FastifyRequest, reply, done) => {
    reply.header('X-Request-Id', req.id);
    done();
  });
  app.useGlobalPipes(new RequestValidationPipe());
  setupOpenApi(app);
}

export async function closeApp(app: INestApplication, dataSource: DataSource): Promise<void> {
  await app.close();
  if (dataSource.isInitialized) await dataSource.destroy();
}
