import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { isUuid } from '../../common/http/uuid';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { assertInstanceAdmin } from '../../common/auth/instance-admin';
import { compileSchema, schemaProblems } from './manifest';
import { PluginCore } from './plugin-core.service';
import { PluginSupervisor } from './plugin-supervisor.service';
import { pluginError } from './plugins.errors';
import { JobRunRecord, PluginRecord, PluginsRepository } from './plugins.repository';

/** Calls into a plugin's worker: tools, webhooks, data feeds, actions, dashboard, streams and jobs. */
@Injectable()
export class PluginCallsService {
  constructor(
    private readonly core: PluginCore,
    private readonly repo: PluginsRepository,
    private readonly supervisor: PluginSupervisor,
    private readonly config: AppConfig,
    private readonly db: Db,
    private readonly companies: CompanyAccessService,
  ) {}

  // ---------------------------------------------------------------- tools and webhooks

  async tools() {
    const out: Record<string, unknown>[] = [];
    for (const p of await this.repo.listEnabled()) {
      for (const t of p.manifest.tools) {
        out.push({
          key: `${p.pluginKey}:${t.name}`,
          name: t.name,
          description: t.description,
          inputSchema: t.inputSchema,
          pluginId: p.id,
          pluginKey: p.pluginKey,
        });
      }
    }
    return out;
  }

  async executeTool(actor: Actor, tool: string, input: unknown, companyId?: string) {
    const [pluginKey, name] = tool.includes(':') ? tool.split(':', 2) : [undefined, tool];
    const enabled = await this.core.enabledPlugins();
    const matches = enabled.filter((p) => (!pluginKey || p.pluginKey === pluginKey) && p.manifest.tools.some((t) => t.name === name));
    if (matches.length === 0) throw pluginError('plugin_tool_not_found', `No enabled plugin has a tool ${tool}`);
    if (matches.length > 1) throw pluginError('plugin_tool_not_found', `Tool ${name} is ambiguous: name it as pluginKey:${name}`);
    const p = matches[0];
    const def = p.manifest.tools.find((t) => t.name === name)!;
    const company = actor.kind === 'agent' ? actor.companyId : companyId;
    if (company !== undefined) {
      if (!isUuid(company)) throw pluginError('plugin_tool_input_invalid', 'companyId must be a UUID');
      // outside the request's transaction: no pooled connection waits idle while the worker answers
      await this.db.detached(() => this.companies.assertCompanyAccess(actor, company));
    }
    const validate = compileSchema(def.inputSchema);
    if (!validate(input))
      throw pluginError('plugin_tool_input_invalid', `Invalid tool input: ${schemaProblems(validate).join('; ')}`, {
        problems: schemaProblems(validate),
      });
    const started = Date.now();
    const output = await this.core.callWorker(
      p,
      'tools.execute',
      {
        name,
        input,
        context: {
          companyId: company ?? null,
          caller: actor.kind === 'agent' ? { type: 'agent', agentId: actor.agentId } : { type: 'user', userId: actor.userId },
        },
      },
      def.timeoutMs ?? this.config.plugins.toolTimeoutMs,
      company ?? null,
    );
    return { tool: `${p.pluginKey}:${name}`, pluginId: p.id, output, durationMs: Date.now() - started };
  }

  /** Inbound webhook: unknown endpoint 404, a disabled plugin 409 (it exists but does not take deliveries). */
  async webhook(id: string, endpointKey: string, req: { headers: Record<string, unknown>; body: unknown; query: unknown }) {
    const p = await this.core.load(id);
    if (!p.manifest.webhooks.some((w) => w.key === endpointKey))
      throw pluginError('plugin_endpoint_not_found', `Plugin has no webhook endpoint ${endpointKey}`);
    this.core.assertEnabled(p);
    const headers: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(req.headers)) if (!['authorization', 'cookie'].includes(k.toLowerCase())) headers[k] = v;
    const res = await this.core.callWorker<{ status?: number; body?: unknown }>(
      p,
      'webhooks.handle',
      { endpointKey, headers, body: req.body ?? null, query: req.query ?? {} },
      30_000,
    );
    const status = Number.isInteger(res?.status) && res!.status! >= 200 && res!.status! < 600 ? res!.status! : 200;
    return { status, body: res?.body ?? { ok: true } };
  }

  // ---------------------------------------------------------------- data, actions, dashboard, streams

  async data(actor: Actor, id: string, key: string, params: unknown, companyId?: string) {
    const p = await this.core.load(id);
    if (!p.manifest.data.some((d) => d.key === key)) throw pluginError('plugin_endpoint_not_found', `Plugin has no data feed ${key}`);
    this.core.assertEnabled(p);
    await this.core.checkCompany(actor, companyId);
    return {
      key,
      data: await this.core.callWorker(p, 'data.get', { key, params: params ?? {}, companyId: companyId ?? null }, 15_000, companyId),
    };
  }

  async action(actor: Actor, id: string, key: string, params: unknown, companyId?: string) {
    const p = await this.core.load(id);
    if (!p.manifest.actions.some((d) => d.key === key)) throw pluginError('plugin_endpoint_not_found', `Plugin has no action ${key}`);
    this.core.assertEnabled(p);
    await this.core.checkCompany(actor, companyId);
    return {
      key,
      result: await this.core.callWorker(p, 'actions.run', { key, params: params ?? {}, companyId: companyId ?? null }, 30_000, companyId),
    };
  }

  async dashboard(actor: Actor, id: string) {
    assertInstanceAdmin(actor);
    const p = await this.core.load(id);
    this.core.assertEnabled(p);
    return { pluginId: p.id, dashboard: await this.core.callWorker(p, 'dashboard.get', {}, 15_000) };
  }

  /** A stream channel of an enabled plugin (SSE); worker publishes with host method stream.publish. */
  async openStream(actor: Actor, id: string) {
    assertInstanceAdmin(actor);
    const p = await this.core.load(id);
    this.core.assertEnabled(p);
    if (!p.manifest.capabilities.includes('ui.stream'))
      throw pluginError('plugin_endpoint_not_found', 'Plugin declares no stream channels (capability ui.stream)');
    await this.supervisor.ensure(p).catch(() => undefined);
    return p;
  }

  // ---------------------------------------------------------------- jobs

  async jobs(actor: Actor, id: string) {
    assertInstanceAdmin(actor);
    const p = await this.core.load(id);
    return Promise.all(p.manifest.jobs.map(async (j) => ({ ...j, jobId: j.key, lastRun: await this.repo.lastRun(p.id, j.key) })));
  }

  async runs(actor: Actor, id: string, jobKey: string, limit: number): Promise<JobRunRecord[]> {
    assertInstanceAdmin(actor);
    const p = await this.core.load(id);
    if (!p.manifest.jobs.some((j) => j.key === jobKey)) throw pluginError('plugin_job_not_found', `Plugin has no job ${jobKey}`);
    return this.repo.recentRuns(p.id, jobKey, limit);
  }

  /** Manual run: recorded and run now; answers the finished run. */
  async trigger(actor: Actor, id: string, jobKey: string): Promise<JobRunRecord> {
    assertInstanceAdmin(actor);
    const p = await this.core.load(id);
    if (!p.manifest.jobs.some((j) => j.key === jobKey)) throw pluginError('plugin_job_not_found', `Plugin has no job ${jobKey}`);
    this.core.assertEnabled(p);
    const run = await this.repo.insertManualRun(p.id, jobKey, this.config.instanceId);
    return this.runJob(p, run);
  }

  /** Runs a claimed job run in the worker and records the outcome (never throws). */
  async runJob(p: PluginRecord, run: JobRunRecord): Promise<JobRunRecord> {
    let status: 'succeeded' | 'failed' = 'succeeded';
    let error: string | null = null;
    let result: unknown = null;
    try {
      result = await this.core.callWorker(
        p,
        'jobs.run',
        { jobKey: run.jobKey, runId: run.id, trigger: run.trigger, scheduledFor: run.scheduledFor },
        5 * 60_000,
      );
    } catch (err) {
      status = 'failed';
      error = (err as Error).message.slice(0, 1000);
    }
    return (await this.repo.finishRun(run.id, status, error, result ?? null)) ?? run;
  }
}
