import type { FastifyInstance } from 'fastify';

/** JSON body limit of the package import routes (a package is at most 64 MiB of text, plus JSON escaping). */
export const PACKAGE_BODY_LIMIT = 96 * 1024 * 1024;

const IMPORT_ROUTE = /^\/api\/companies\/(import(\/preview)?|:companyId\/imports\/(preview|apply))$/;

/** Raises Fastify's body limit for the import routes only (every other route keeps 1 MiB). */
export function allowLargePackageBodies(fastify: FastifyInstance): void {
  fastify.addHook('onRoute', (route) => {
    if (IMPORT_ROUTE.test(route.url)) route.bodyLimit = PACKAGE_BODY_LIMIT;
  });
}
