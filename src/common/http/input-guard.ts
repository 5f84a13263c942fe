import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Deepest nesting of a JSON body (objects and arrays) that reaches validation. */
export const MAX_BODY_DEPTH = 32;

export interface InputProblem {
  status: 400;
  code: 'invalid_characters' | 'invalid_unicode' | 'body_too_deep';
  error: string;
  field: string;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const label = (path: string[]): string => path.join('.') || '(body)';

/**
 * Checks a decoded input (path parameters, query, JSON body) once, at the edge, before any guard,
 * rate limiter or validation runs: no NUL character (Postgres cannot store it), no lone UTF-16
 * surrogate (not valid Unicode; breaks URI encoding and UTF-8), in values or keys, and no nesting
 * deeper than MAX_BODY_DEPTH (validation recurses). Iterative, so a hostile depth cannot exhaust
 * the stack here either.
 */
export function findInputProblem(root: unknown, prefix: string[], maxDepth = MAX_BODY_DEPTH): InputProblem | null {
  const stack: Array<[unknown, string[], number]> = [[root, prefix, 0]];
  while (stack.length) {
    const [value, path, depth] = stack.pop()!;
    if (typeof value === 'string') {
      const problem = stringProblem(value, path);
      if (problem) return problem;
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= maxDepth) {
      return {
        status: 400,
        code: 'body_too_deep',
        error: `Input is nested deeper than ${maxDepth} levels at ${label(path)}`,
        field: label(path),
      };
    }
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      const childPath = [...path, key];
      const keyProblem = stringProblem(key, childPath);
      if (keyProblem) return keyProblem;
      stack.push([child, childPath, depth + 1]);
    }
  }
  return null;
}

function stringProblem(s: string, path: string[]): InputProblem | null {
  if (s.includes('\u0000')) {
    return { status: 400, code: 'invalid_characters', error: `${label(path)} contains a NUL character`, field: label(path) };
  }
  if (LONE_SURROGATE.test(s)) {
    return { status: 400, code: 'invalid_unicode', error: `${label(path)} is not valid Unicode (lone surrogate)`, field: label(path) };
  }
  return null;
}

/** Registers the edge check for every route: a 400 naming the field, before anything else reads the input. */
export function registerInputGuard(fastify: FastifyInstance): void {
  fastify.addHook('preValidation', (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const problem =
      findInputProblem(req.params, ['path'], 2) ??
      findInputProblem(req.query, ['query'], 8) ??
      findInputProblem(req.body, [], MAX_BODY_DEPTH);
    if (!problem) return done();
    const field = problem.field.replace(/^(path|query)\./, '');
    const error = problem.error.replace(/^path\.(\S+)/, 'path parameter $1').replace(/^query\.(\S+)/, 'query parameter $1');
    void reply
      .status(400)
      .header('Content-Type', 'application/json; charset=utf-8')
      .send({ error, code: problem.code, field, fields: [{ field, messages: [error] }] });
  });
}
