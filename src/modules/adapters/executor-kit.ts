import { outboundGuard, type OutboundTarget } from '../../common/net/outbound-guard';
import { isSecretRef } from '../secrets/secret-ref';
import type { AdapterRunContext } from './adapter.types';
import { strArray, str } from './adapter.types';
import type { RunOutcome } from './run.types';
import { wakeSection } from './wake-prompt';

/*
 * What the executors share (process, http, gateway, the CLI runtimes): config readers and checks,
 * the child-process runner, the prompt of a CLI and what a remote's report means. Executors import
 * this kit and the types, never each other.
 */

export { num, str, strArray } from './adapter.types';
export { baseChildEnv, commandCheck, findCommand, runChild, type ChildRunOptions } from './child-process-run';
export { wakeSection } from './wake-prompt';

export const DEFAULT_GRACE_SEC = 15;

/** Problems of an `env` map: names must be variable names, values strings (`{ type: "plain", value }` too) or secret references. */
export function validateEnv(env: unknown): string[] {
  if (env === undefined) return [];
  if (!env || typeof env !== 'object' || Array.isArray(env)) return ['env must be an object'];
  const errors: string[] = [];
  for (const [k, v] of Object.entries(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) errors.push(`env name ${k} is not a valid variable name`);
    const plain =
      !!v && typeof v === 'object' && (v as { type?: unknown }).type === 'plain' && typeof (v as { value?: unknown }).value === 'string';
    if (typeof v !== 'string' && !plain && !isSecretRef(v))
      errors.push(`env.${k} must be a string, { type: "plain", value } or { type: "secret_ref", secretId }`);
  }
  return errors;
}

export function validateTimeouts(c: Record<string, unknown>): string[] {
  const errors: string[] = [];
  for (const k of ['timeoutSec', 'graceSec']) {
    const v = c[k];
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0)) errors.push(`${k} must be a number >= 0`);
  }
  return errors;
}

/** The prompt a CLI runtime reads on stdin (the new turn, fresh or resumed): who it is, instructions, skills, why it was woken. */
export function buildPrompt(ctx: AdapterRunContext): string {
  const c = ctx.config;
  const parts: string[] = [];
  parts.push(`You are ${ctx.agent.name} (${ctx.agent.role}${ctx.agent.title ? `, ${ctx.agent.title}` : ''}).`);
  const instructions = str(c.instructions) ?? str(c.promptTemplate);
  if (instructions) parts.push(instructions);
  if (ctx.agent.capabilities) parts.push(`Capabilities: ${ctx.agent.capabilities}`);
  const sync = c.serviceSkillSync as { desiredSkills?: unknown } | undefined;
  const skills = strArray(sync?.desiredSkills);
  if (skills.length) parts.push(`Skills: ${skills.join(', ')}`);
  parts.push(wakeSection(ctx.context, ctx.wake));
  parts.push(`Use the API at ${ctx.apiUrl} with the token in SERVICE_API_KEY and the header X-Service-Run-Id: ${ctx.runId}.`);
  return parts.join('\n\n') + '\n';
}

/** No allow-list, no loopback: the default when an executor is built without configuration. */
export const STRICT_OUTBOUND: OutboundTarget = { guard: outboundGuard({ allowHosts: [], allowRanges: [] }), options: {} };

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** What a sync response body (or a completion callback) may report. */
export function outcomeFromReport(body: unknown): Pick<RunOutcome, 'usage' | 'result'> {
  if (!isObject(body)) return { usage: null, result: null };
  const usage = isObject(body.usage) ? { ...body.usage } : null;
  const costCents = typeof body.costCents === 'number' ? body.costCents : undefined;
  const withCost = costCents !== undefined ? { ...(usage ?? {}), costCents } : usage;
  const result: Record<string, unknown> = {};
  if (typeof body.summary === 'string') result.summary = body.summary.slice(0, 20_000);
  if (isObject(body.result)) Object.assign(result, body.result);
  return { usage: withCost, result: Object.keys(result).length ? result : null };
}
