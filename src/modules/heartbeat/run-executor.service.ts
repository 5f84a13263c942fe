import * as fs from 'node:fs';
import { Injectable, Logger } from '@nestjs/common';
import { AgentIdentities, AgentIdentityError } from '../../common/process/agent-identities';
import { AppConfig } from '../../config/app-config';
import { AdapterExecutors } from '../adapters/adapter-executors';
import type { AdapterExecutor, AdapterRun, AdapterRunContext } from '../adapters/adapter.types';
import { HeartbeatRunsRepository } from './heartbeat-runs.repository';
import type { RunOutcome } from '../adapters/run.types';
import type { EngineAgentRecord, RunRecord } from './heartbeat.types';
import { RunLifecycle } from './run-lifecycle.service';
import { RunLiveEvents } from './run-live-events';
import { RunLogService, RunLogWriter } from './run-log.service';
import { RunProcessGroups, type RunProcessTracker } from './run-process-groups.service';
import { RunTokenService } from './run-token.service';
import { EnvResolutionError, RunEnvResolver } from './run-env.service';
import { runFinished, runProcessStarted, runTraceparent } from '../../common/tracing/run-tracing';
import { RunUsageMonitor, type RunStop } from './run-usage-monitor.service';
import { RunWakeDetails } from './run-wake-details.port';

/** SIGTERM to SIGKILL when a cap or a budget stops a run: it ends within 2 s */
const CAP_STOP_GRACE_SEC = 1;

/** A run executing on this instance. */
export interface LocalRun {
  runId: string;
  /** `graceSec` overrides the agent's SIGTERM→SIGKILL delay (0: at once), also when already cancelled */
  cancel(reason: string, graceSec?: number): void;
  logBytes(): number;
  done: Promise<void>;
}

/** The SERVICE_* variables of a local process: where the API is, who it is, and why it was woken. */
export function serviceEnv(run: RunRecord, apiUrl: string, token: string, resumeSessionId: string | null): Record<string, string> {
  const c = run.contextSnapshot;
  const env: Record<string, string> = {
    SERVICE_API_URL: apiUrl,
    SERVICE_API_KEY: token,
    SERVICE_RUN_ID: run.id,
    SERVICE_AGENT_ID: run.agentId,
    SERVICE_COMPANY_ID: run.companyId,
    SERVICE_WAKE_SOURCE: c.source,
    SERVICE_WAKE_PAYLOAD_JSON: JSON.stringify(c.payload ?? {}),
  };
  if (c.issueId) env.SERVICE_TASK_ID = c.issueId;
  if (c.reason) env.SERVICE_WAKE_REASON = c.reason;
  if (c.commentId) env.SERVICE_WAKE_COMMENT_ID = c.commentId;
  if (resumeSessionId) env.SERVICE_RESUME_SESSION_ID = resumeSessionId;
  // the agent's API calls join the run's trace (tracing on only)
  const traceparent = runTraceparent(run.id);
  if (traceparent) env.TRACEPARENT = traceparent;
  return env;
}

/** One run while it executes here: how it is cancelled, its log, its scratch folder and its processes. */
class LaunchedRun {
  cancelled: string | null = null;
  /** the shortest grace a cancel asked for (a run cancelled before its process exists gets it when it starts) */
  cancelGraceSec: number | undefined = undefined;
  handle: AdapterRun | null = null;
  writer: RunLogWriter | null = null;
  scratchMade = false;

  constructor(
    readonly run: RunRecord,
    readonly agent: EngineAgentRecord,
    readonly processes: RunProcessTracker,
  ) {}

  /** `graceSec` shortens the SIGTERM→SIGKILL delay, also of a run already being cancelled */
  cancel(reason: string, graceSec?: number): void {
    if (this.cancelled && graceSec === undefined) return;
    this.cancelled ??= reason;
    if (graceSec !== undefined) this.cancelGraceSec = Math.min(graceSec, this.cancelGraceSec ?? graceSec);
    this.handle?.cancel(reason, graceSec);
  }

  get logBytes(): number {
    return this.writer?.size ?? 0;
  }
}

/** What a run starts with once its adapter accepted the agent's config. */
interface PreparedLaunch {
  executor: AdapterExecutor;
  config: Record<string, unknown>;
}

/** How a launch step failed: an outcome the run ends with. */
function launchFailure(err: unknown): RunOutcome {
  return err instanceof EnvResolutionError || err instanceof AgentIdentityError
    ? { status: 'failed', errorCode: err.code, error: err.message }
    : { status: 'failed', errorCode: 'adapter_error', error: (err as Error).message };
}

/**
 * Executes one claimed run through its adapter, streams its log, and ends it with the outcome, in
 * four steps: prepare (the executor and the agent's effective config), context (identity, scratch,
 * env with secrets, token, log, session, what woke it), execute (under the usage monitor: caps and
 * budgets stop it) and finish (its end recorded, or its usage settled when it had ended elsewhere).
 */
@Injectable()
export class RunExecutor {
  private readonly logger = new Logger('RunExecutor');

  constructor(
    private readonly runs: HeartbeatRunsRepository,
    private readonly config: AppConfig,
    private readonly executors: AdapterExecutors,
    private readonly tokens: RunTokenService,
    private readonly logs: RunLogService,
    private readonly envResolver: RunEnvResolver,
    private readonly lifecycle: RunLifecycle,
    private readonly processGroups: RunProcessGroups,
    private readonly live: RunLiveEvents,
    private readonly identities: AgentIdentities,
    private readonly usage: RunUsageMonitor,
    private readonly wakeDetails: RunWakeDetails,
  ) {}

  launch(run: RunRecord, agent: EngineAgentRecord, isStopping: () => boolean): LocalRun {
    const l = new LaunchedRun(run, agent, this.processGroups.track(run.companyId, run.id));
    return {
      runId: run.id,
      cancel: (reason, graceSec) => l.cancel(reason, graceSec),
      logBytes: () => l.logBytes,
      done: this.runToEnd(l, isStopping),
    };
  }

  private async runToEnd(l: LaunchedRun, isStopping: () => boolean): Promise<void> {
    let outcome: RunOutcome;
    try {
      const prepared = await this.prepare(l);
      outcome = 'status' in prepared ? prepared : await this.execute(l, prepared.executor, await this.context(l, prepared.config));
    } catch (err) {
      outcome = launchFailure(err);
    } finally {
      this.cleanUp(l);
    }
    await this.finish(l.run, outcome, l.logBytes, isStopping());
  }

  /** The run's executor and the agent's effective config, or the outcome that ends the run before it starts. */
  private async prepare(l: LaunchedRun): Promise<PreparedLaunch | RunOutcome> {
    const type = l.run.adapterType;
    const executor = this.executors.get(type);
    if (!executor) return { status: 'failed', errorCode: 'adapter_not_found', error: `no executor for adapter type ${type}` };
    const config = await this.executors.effectiveConfig(type, l.agent.adapterConfig ?? {});
    const problems = executor.validateConfig(config);
    if (problems.length) return { status: 'failed', errorCode: 'adapter_config_invalid', error: problems.join('; ') };
    return { executor, config };
  }

  /** Everything the executor is given: the agent's identity and scratch, its env, token and log, its session and why it was woken. */
  private async context(l: LaunchedRun, config: Record<string, unknown>): Promise<AdapterRunContext> {
    const { run, agent } = l;
    const project = await this.runs.projectContext(run);
    // the agent's own OS identity and the run's private scratch (removed when the run ends)
    const runAs = this.identities.forAgent(run.agentId, run.companyId);
    const scratch = this.identities.createRunScratch(run.id, runAs);
    l.scratchMade = true;
    const resolved = await this.envResolver.resolve(config.env, {
      companyId: run.companyId,
      agentId: run.agentId,
      runId: run.id,
      projectId: project.projectId,
      scratch: { dir: scratch.dir, uid: runAs?.uid ?? null, gid: runAs?.gid ?? null },
    });
    const token = this.tokens.issue({ agentId: run.agentId, companyId: run.companyId, runId: run.id });
    const writer = this.logs.open(run.companyId, run.id, [token, ...resolved.secrets], this.live.logSink(run));
    l.writer = writer;
    const session = run.contextSnapshot.forceFreshSession ? null : await this.runs.lastSession(run);
    const apiUrl = this.config.publicUrl;
    return {
      runId: run.id,
      agentId: run.agentId,
      companyId: run.companyId,
      adapterType: run.adapterType,
      config,
      configEnv: resolved.env,
      agent: { name: agent.name, role: agent.role, title: agent.title, capabilities: agent.capabilities, metadata: agent.metadata },
      context: run.contextSnapshot,
      wake: await this.wake(run),
      serviceEnv: { ...serviceEnv(run, apiUrl, token, session?.id ?? null), TMPDIR: scratch.tmp },
      apiUrl,
      runToken: token,
      resumeSessionId: session?.id ?? null,
      resumeSessionShape: session?.shape ?? null,
      resumeSessionTotals: session?.totals ?? null,
      runAs,
      sandbox: { root: this.config.agentIdentity.root, namespaces: this.config.agentIdentity.namespaces },
      onProcessStarted: (pgid) => {
        runProcessStarted(run.id, pgid);
        l.processes.started(pgid);
      },
      projectId: project.projectId,
      workspaceCwd: project.cwd && fs.existsSync(project.cwd) ? project.cwd : null,
      log: (stream, chunk) => writer.write(stream, chunk),
      onEvent: (type, message, payload) => this.live.event(run, type, message, payload ?? null),
    };
  }

  /** What the wake names (issue, comments) for the prompt; a run whose wake cannot be read still runs. */
  private wake(run: RunRecord) {
    return this.wakeDetails.read(run.companyId, run.contextSnapshot).catch((err: Error) => {
      this.logger.warn(`what woke run ${run.id} is not readable: ${err.message}`);
      return null;
    });
  }

  /** Runs the executor to its end; caps and hard-stop budgets act on the usage it reports while it runs. */
  private async execute(l: LaunchedRun, executor: AdapterExecutor, ctx: AdapterRunContext): Promise<RunOutcome> {
    let capStop: RunStop | null = null;
    const watch = this.usage.watch(l.run, l.agent, ctx.projectId ?? null, (s) => {
      capStop = s;
      l.handle?.cancel(s.message, CAP_STOP_GRACE_SEC);
    });
    ctx.onUsage = (u) => watch.onUsage(u);
    l.handle = executor.start(ctx);
    if (l.cancelled) l.handle.cancel(l.cancelled, l.cancelGraceSec);
    let outcome = await l.handle.done;
    watch.close();
    const stop = capStop as RunStop | null;
    if (stop) outcome = { ...outcome, status: 'cancelled', errorCode: stop.code, error: stop.message };
    await l.processes.ended();
    return outcome;
  }

  private cleanUp(l: LaunchedRun): void {
    l.writer?.close();
    if (!l.scratchMade) return;
    try {
      this.identities.removeRunScratch(l.run.id);
    } catch (err) {
      this.logger.warn(`could not remove the scratch folder of run ${l.run.id}: ${(err as Error).message}`);
    }
  }

  /**
   * Ends the run with its outcome. A run that had already ended (cancelled, paused, reaped: here or
   * on another instance) keeps its end, and the usage its process reported to the last line is
   * settled (booked beyond what was booked at the end). An instance that is shutting down has
   * handed its runs back: it only settles.
   */
  private async finish(run: RunRecord, outcome: RunOutcome, logBytes: number, stopping: boolean): Promise<void> {
    runFinished(run.id, outcome);
    try {
      const ended = stopping ? null : await this.lifecycle.finishRun(run.id, outcome, { agentId: run.agentId, logBytes });
      if (!ended) await this.lifecycle.settleUsage(run.id, run.companyId, outcome.usage);
    } catch (err) {
      this.logger.error(`could not record the end of run ${run.id}: ${(err as Error).message}`);
    }
  }
}
