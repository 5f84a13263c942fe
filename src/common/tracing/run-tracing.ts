import type { Attributes, Context, Link, Span } from '@opentelemetry/api';
import { Tracing, tracing } from './tracing';

/**
 * One trace per run (docs/tracing.md): `heartbeat.wake` (the root, linked to the request or span
 * that caused the wake; its traceparent is stored with the run) → `heartbeat.run.queued` →
 * `heartbeat.run` (claimed on an instance) → `heartbeat.run.process` → the agent's own API calls
 * (TRACEPARENT in its environment) and their `gen_ai.cost` bookings → finish. Every function here
 * does nothing when tracing is off. Attributes carry ids, counts and model names, never a prompt,
 * a secret or a token.
 */

export interface RunIds {
  id?: string;
  companyId: string;
  agentId: string;
  issueId?: string | null;
  adapterType?: string | null;
}

interface OpenRun {
  span: Span;
  ctx: Context;
  process?: Span;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  costCents: number;
  models: Set<string>;
  systems: Set<string>;
}

const open = new Map<string, OpenRun>();

/**
 * The provider each adapter type talks to, as gen_ai.system names it. Each executor describes its
 * own (`genAiSystem`) and the adapters module registers it here as the executor registers: tracing
 * sits below adapters and names no type itself.
 */
const genAiSystems = new Map<string, string>();

/** The gen_ai.system of an adapter type's runs (null: none, e.g. a process or an external type). */
export function registerGenAiSystem(adapterType: string, system: string | null): void {
  if (system) genAiSystems.set(adapterType, system);
  else genAiSystems.delete(adapterType);
}

function runAttributes(r: RunIds): Attributes {
  const a: Attributes = { 'service.company_id': r.companyId, 'service.agent_id': r.agentId };
  if (r.id) a['service.run_id'] = r.id;
  if (r.issueId) a['service.issue_id'] = r.issueId;
  if (r.adapterType) {
    a['service.adapter_type'] = r.adapterType;
    const system = genAiSystems.get(r.adapterType);
    if (system) a['gen_ai.system'] = system;
  }
  return a;
}

function contextOf(t: Tracing, traceparent: string | null | undefined): Context {
  const carrier = traceparent ? { traceparent } : {};
  return t.api.propagation.extract(t.api.ROOT_CONTEXT, carrier);
}

function traceparentOf(t: Tracing, ctx: Context): string | null {
  const carrier: Record<string, string> = {};
  t.api.propagation.inject(ctx, carrier);
  return carrier.traceparent ?? null;
}

/** The W3C traceparent of the active span (the request that causes a wake), or null. */
export function currentTraceparent(): string | null {
  const t = tracing();
  if (!t || !t.api.trace.getSpan(t.api.context.active())) return null;
  return traceparentOf(t, t.api.context.active());
}

/**
 * Starts a run's trace: the root span `heartbeat.wake`, linked to what caused the wake (the stored
 * traceparent of the wakeup, else the active span). Returns its traceparent, stored with the run.
 */
export function startRunTrace(run: RunIds, cause: string | null | undefined, source?: string | null): string | null {
  const t = tracing();
  if (!t) return null;
  const causeCtx = cause ? t.api.trace.getSpanContext(contextOf(t, cause)) : t.api.trace.getSpanContext(t.api.context.active());
  const links: Link[] = causeCtx ? [{ context: causeCtx }] : [];
  const span = t.tracer.startSpan(
    'heartbeat.wake',
    { root: true, links, attributes: { ...runAttributes(run), ...(source ? { 'service.wake_source': source } : {}) } },
    t.api.ROOT_CONTEXT,
  );
  span.end();
  return traceparentOf(t, t.api.trace.setSpan(t.api.ROOT_CONTEXT, span));
}

/** The run was claimed on this instance: `heartbeat.run.queued` (since it was queued) and the open `heartbeat.run` span. */
export function runClaimed(run: RunIds & { id: string; traceParent?: string | null; createdAt?: Date | null }, instanceId: string): void {
  const t = tracing();
  if (!t) return;
  const parent = contextOf(t, run.traceParent);
  const attrs = { ...runAttributes(run), 'service.instance_id': instanceId };
  t.tracer.startSpan('heartbeat.run.queued', { startTime: run.createdAt ?? undefined, attributes: attrs }, parent).end();
  const span = t.tracer.startSpan('heartbeat.run', { attributes: attrs }, parent);
  open.set(run.id, {
    span,
    ctx: t.api.trace.setSpan(parent, span),
    inputTokens: 0,
    outputTokens: 0,
    cachedInputTokens: 0,
    costCents: 0,
    models: new Set(),
    systems: new Set(),
  });
}

/** TRACEPARENT for the run's process: its API calls join the run's trace. */
export function runTraceparent(runId: string): string | null {
  const t = tracing();
  const r = open.get(runId);
  return t && r ? traceparentOf(t, r.process ? t.api.trace.setSpan(r.ctx, r.process) : r.ctx) : null;
}

/** The run's process (group) started. */
export function runProcessStarted(runId: string, pgid: number): void {
  const t = tracing();
  const r = open.get(runId);
  if (!t || !r || r.process) return;
  r.process = t.tracer.startSpan('heartbeat.run.process', { attributes: { 'process.pid': pgid } }, r.ctx);
}

/** A model turn's usage booked as a cost event (in the context of the request that reported it). */
export function costBooked(e: {
  runId: string | null;
  companyId: string;
  agentId: string;
  provider: string;
  model: string;
  inputTokens: number | null;
  outputTokens: number | null;
  cachedInputTokens: number | null;
  costCents: number | null;
}): void {
  const t = tracing();
  if (!t) return;
  const attrs: Attributes = {
    'gen_ai.system': e.provider,
    'gen_ai.request.model': e.model,
    'service.company_id': e.companyId,
    'service.agent_id': e.agentId,
  };
  if (e.runId) attrs['service.run_id'] = e.runId;
  if (e.inputTokens !== null) attrs['gen_ai.usage.input_tokens'] = e.inputTokens;
  if (e.outputTokens !== null) attrs['gen_ai.usage.output_tokens'] = e.outputTokens;
  if (e.cachedInputTokens !== null) attrs['gen_ai.usage.cached_input_tokens'] = e.cachedInputTokens;
  if (e.costCents !== null) attrs['service.cost_cents'] = e.costCents;
  t.tracer.startSpan(`gen_ai.cost ${e.model}`, { attributes: attrs }).end();
  const r = e.runId ? open.get(e.runId) : undefined;
  if (!r) return;
  r.inputTokens += e.inputTokens ?? 0;
  r.outputTokens += e.outputTokens ?? 0;
  r.cachedInputTokens += e.cachedInputTokens ?? 0;
  r.costCents += e.costCents ?? 0;
  r.models.add(e.model);
  r.systems.add(e.provider);
}

/**
 * One model turn a runtime reported while the run ran (CLI runtimes: per model call): a span
 * `chat <model>` under the run's process span with the GenAI usage attributes. Counts and the model
 * name only: no prompt or answer text.
 */
export function runTurn(
  run: RunIds & { id: string },
  turn: {
    index: number;
    system: string;
    model: string | null;
    inputTokens: number;
    cachedInputTokens: number;
    cacheCreationInputTokens: number;
    outputTokens: number;
    costUsd: number | null;
    startTime: number;
    endTime: number;
  },
): void {
  const t = tracing();
  const r = open.get(run.id);
  if (!t || !r) return;
  const attrs: Attributes = {
    ...runAttributes(run),
    'gen_ai.operation.name': 'chat',
    'gen_ai.system': turn.system,
    'gen_ai.usage.input_tokens': turn.inputTokens,
    'gen_ai.usage.output_tokens': turn.outputTokens,
    'gen_ai.usage.cached_input_tokens': turn.cachedInputTokens,
    'gen_ai.usage.cache_creation_input_tokens': turn.cacheCreationInputTokens,
    'service.turn': turn.index,
  };
  if (turn.model) attrs['gen_ai.request.model'] = turn.model;
  if (turn.costUsd !== null) attrs['service.cost_usd'] = turn.costUsd;
  const parent = r.process ? t.api.trace.setSpan(r.ctx, r.process) : r.ctx;
  const start = Math.min(turn.startTime, turn.endTime);
  t.tracer.startSpan(`chat ${turn.model ?? turn.system}`, { startTime: start, attributes: attrs }, parent).end(turn.endTime);
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
/** A number of a run's usage report, which an external adapter may spell in its own snake_case. */
const reported = (u: Record<string, unknown>, name: string, wireName: string): number | null => num(u[name]) ?? num(u[wireName]);

/** The run ended: the process span and the run span close, with its usage (reported at the end, or booked during the run). */
export function runFinished(
  runId: string,
  outcome: { status: string; exitCode?: number | null; errorCode?: string | null; usage?: Record<string, unknown> | null },
): void {
  const t = tracing();
  const r = open.get(runId);
  if (!t || !r) return;
  open.delete(runId);
  r.process?.end();
  const u = outcome.usage ?? {};
  const input = reported(u, 'inputTokens', 'input_tokens') ?? r.inputTokens;
  const output = reported(u, 'outputTokens', 'output_tokens') ?? r.outputTokens;
  const cached = reported(u, 'cachedInputTokens', 'cached_input_tokens') ?? r.cachedInputTokens;
  const cost = num(u.costCents) ?? r.costCents;
  const model = typeof u.model === 'string' ? u.model : r.models.size === 1 ? [...r.models][0] : null;
  const attrs: Attributes = {
    'service.run_status': outcome.status,
    'gen_ai.usage.input_tokens': input,
    'gen_ai.usage.output_tokens': output,
    'gen_ai.usage.cached_input_tokens': cached,
    'service.cost_cents': cost,
  };
  if (model) attrs['gen_ai.request.model'] = model;
  if (r.systems.size === 1) attrs['gen_ai.system'] = [...r.systems][0];
  if (outcome.exitCode !== undefined && outcome.exitCode !== null) attrs['process.exit.code'] = outcome.exitCode;
  if (outcome.errorCode) attrs['error.type'] = outcome.errorCode;
  r.span.setAttributes(attrs);
  if (outcome.status !== 'succeeded') r.span.setStatus({ code: t.api.SpanStatusCode.ERROR, message: outcome.errorCode ?? outcome.status });
  r.span.end();
}
