import * as fs from 'node:fs';
import { Injectable, Logger } from '@nestjs/common';
import { AgentIdentities, AgentIdentityError } from '../../common/process/agent-identities';
import { AppConfig } from '../../config/app-config';
import { AdapterExecutors } from '../adapters/adapter-executors';
import type { AdapterRunContext } from '../adapters/adapter.types';
import { HeartbeatRunsRepository } from './heartbeat-runs.repository';
import type { RunOutcome } from '../adapters/run.types';
import type { AgentRow, RunRow } from './heartbeat.types';
import { RunLifecycle } from './run-lifecycle.service';
import { RunLiveEvents } from './run-live-events';
import { RunLogService, RunLogWriter } from './run-log.service';
import { RunProcessGroups } from './run-process-groups.service';
import { RunTokenService } from './run-token.service';
import { EnvResolutionError, RunEnvResolver } from './run-env.service';
import { runFinished, runProcessStarted, runTraceparent } from '../../common/tracing/run-tracing';
import { RunStop, RunUsageMonitor } from './run-usage-monitor.service';
import { RunWakeDetails } from './run-wake-details.port';

/** SIGTERM to SIGKILL when a cap or a budget stops a run: it ends within 2 s */
const CAP_STOP_GRACE_SEC = 1;

/** A run executing on this instance. */
export interface LocalRun {
  runId: string;
  cancel(reason: string): void;
  logBytes(): number;
  done: Promise<void>;
}

/** The SERVICE_* variables of a local process: where the API is, who it is, and why it was woken. */
export function serviceEnv(run: RunRow, apiUrl: string, token: string, resumeSessionId: string | null): Record<string, string> {
  const c = run.context_snapshot;
  const env: Record<string, string> = {
    SERVICE_API_URL: apiUrl,
    SERVICE_API_KEY: token,
    SERVICE_RUN_ID: run.id,
    SERVICE_AGENT_ID: run.agent_id,
    SERVICE_COMPANY_ID: run.company_id,
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

/** Executes one claimed run through its adapter, streams its log, and ends it with the outcome. */
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

  launch(run: RunRow, agent: AgentRow, isStopping: () => boolean): LocalRun {
    let cancelled: string | null = null;
    let adapterCancel: ((reason: string) => void) | null = null;
    let writer: RunLogWriter | null = null;
    const local: LocalRun = {
      runId: run.id,
      cancel: (reason) => {
        if (cancelled) return;
        cancelled = reason;
        adapterCancel?.(reason);
      },
      logBytes: () => writer?.size ?? 0,
      done: Promise.resolve(),
    };
    local.done = (async () => {
      let outcome: RunOutcome;
      let scratchMade = false;
      const processes = this.processGroups.track(run.company_id, run.id);
      try {
        const executor = this.executors.get(run.adapter_type);
        if (!executor)
          outcome = { status: 'failed', errorCode: 'adapter_not_found', error: `no executor for adapter type ${run.adapter_type}` };
        else {
          const config = await this.executors.effectiveConfig(run.adapter_type, agent.adapter_config ?? {});
          const problems = executor.validateConfig(config);
          if (problems.length) outcome = { status: 'failed', errorCode: 'adapter_config_invalid', error: problems.join('; ') };
          else {
            const project = await this.runs.projectContext(run);
            const projectId = project.projectId;
            // the agent's own OS identity and the run's private scratch (removed when the run ends)
            const runAs = this.identities.forAgent(run.agent_id, run.company_id);
            const scratch = this.identities.createRunScratch(run.id, runAs);
            scratchMade = true;
            const resolved = await this.envResolver.resolve(config.env, {
              companyId: run.company_id,
              agentId: run.agent_id,
              runId: run.id,
              projectId,
              scratch: { dir: scratch.dir, uid: runAs?.uid ?? null, gid: runAs?.gid ?? null },
            });
            const token = this.tokens.issue({ agentId: run.agent_id, companyId: run.company_id, runId: run.id });
            writer = this.logs.open(run.company_id, run.id, [token, ...resolved.secrets], this.live.logSink(run));
            const w = writer;
            const apiUrl = this.config.publicUrl;
            const session = run.context_snapshot.forceFreshSession ? null : await this.runs.lastSession(run);
            const resumeSessionId = session?.id ?? null;
            const wake = await this.wakeDetails.read(run.company_id, run.context_snapshot).catch((err: Error) => {
              this.logger.warn(`what woke run ${run.id} is not readable: ${err.message}`);
              return null;
            });
            const ctx: AdapterRunContext = {
              runId: run.id,
              agentId: run.agent_id,
              companyId: run.company_id,
              adapterType: run.adapter_type,
              config,
              configEnv: resolved.env,
              agent: { name: agent.name, role: agent.role, title: agent.title, capabilities: agent.capabilities, metadata: agent.metadata },
              context: run.context_snapshot,
              wake,
              serviceEnv: { ...serviceEnv(run, apiUrl, token, resumeSessionId), TMPDIR: scratch.tmp },
              apiUrl,
              runToken: token,
              resumeSessionId,
              resumeSessionShape: session?.shape ?? null,
              resumeSessionTotals: session?.totals ?? null,
              runAs,
              sandbox: { root: this.config.agentIdentity.root, namespaces: this.config.agentIdentity.namespaces },
              onProcessStarted: (pgid) => {
                runProcessStarted(run.id, pgid);
                processes.started(pgid);
              },
              projectId,
              workspaceCwd: project.cwd && fs.existsSync(project.cwd) ? project.cwd : null,
              log: (stream, chunk) => w.write(stream, chunk),
              onEvent: (type, message, payload) => this.live.event(run, type, message, payload ?? null),
            };
            // caps and hard-stop budgets act on the usage a runtime reports while it runs
            let capStop: RunStop | null = null;
            let stopHandle: ((reason: string, graceSec?: number) => void) | null = null;
            const watch = this.usage.watch(run, agent, projectId, (s) => {
              capStop = s;
              stopHandle?.(s.message, CAP_STOP_GRACE_SEC);
            });
            ctx.onUsage = watch.onUsage;
            const handle = executor.start(ctx);
            adapterCancel = handle.cancel;
            stopHandle = handle.cancel;
            if (cancelled) handle.cancel(cancelled);
            outcome = await handle.done;
            watch.close();
            const stop = capStop as RunStop | null;
            if (stop) outcome = { ...outcome, status: 'cancelled', errorCode: stop.code, error: stop.message };
            await processes.ended();
          }
        }
      } catch (err) {
        outcome =
          err instanceof EnvResolutionError || err instanceof AgentIdentityError
            ? { status: 'failed', errorCode: err.code, error: err.message }
            : { status: 'failed', errorCode: 'adapter_error', error: (err as Error).message };
      } finally {
        (writer as RunLogWriter | null)?.close();
        if (scratchMade) {
          try {
            this.identities.removeRunScratch(run.id);
          } catch (err) {
            this.logger.warn(`could not remove the scratch folder of run ${run.id}: ${(err as Error).message}`);
          }
        }
      }
      await this.finish(run, outcome, (writer as RunLogWriter | null)?.size ?? 0, isStopping());
    })();
    return local;
  }

  /**
   * Ends the run with its outcome. A run that had already ended (cancelled, paused, reaped: here or
   * on another instance) keeps its end, and the usage its process reported to the last line is
   * settled (booked beyond what was booked at the end). An instance that is shutting down has
   * handed its runs back: it only settles.
   */
  private async finish(run: RunRow, outcome: RunOutcome, logBytes: number, stopping: boolean): Promise<void> {
    runFinished(run.id, outcome);
    try {
      const ended = stopping ? null : await this.lifecycle.finishRun(run.id, outcome, { agentId: run.agent_id, logBytes });
      if (!ended) await this.lifecycle.settleUsage(run.id, run.company_id, outcome.usage);
    } catch (err) {
      this.logger.error(`could not record the end of run ${run.id}: ${(err as Error).message}`);
    }
  }
}
