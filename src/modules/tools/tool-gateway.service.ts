import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import { sanitizeDetails } from '../../common/activity/sanitize';
import type { AgentActor } from '../../common/auth/actor';
import { LiveEventBus } from '../../common/events/live-event-bus';
import { endpointOutbound, refusalIn } from '../../common/net/outbound-guard';
import { AppConfig } from '../../config/app-config';
import { RemoteMcpClient } from './remote-mcp-client';
import { ToolActionRequestsRepository } from './tool-action-requests.repository';
import { scrub, ToolConnectionsService } from './tool-connections.service';
import { ToolConnectionsRepository } from './tool-connections.repository';
import { ToolInvocationsRepository } from './tool-invocations.repository';
import { policyFor } from './tool-policy';
import { ToolProfilesService } from './tool-profiles.service';
import type { ActionRequest, CatalogEntry, InvocationStatus, ToolConnection, ToolPolicy } from './tool.types';

/** Between the agent's tool name and the connection's: `<toolPrefix>__<tool>`. */
export const PREFIX_SEPARATOR = '__';
/** How often a call waiting for the board looks at its request. */
const POLL_MS = 250;

type Listed = CatalogEntry & { toolPrefix: string };

/** One gateway call: who calls which tool of which connection, with what, and the invocation that records it. */
interface Call {
  agent: AgentActor;
  c: ToolConnection;
  toolName: string;
  args: Record<string, unknown>;
  /** the id the agent's runtime gave the call (Claude Code's tool use id), when it sent one */
  toolUseId: string | null;
  invocationId?: string;
}

/** The invocation of a call that has started (every path records one before it waits or runs). */
function invocationOf(call: Call): string {
  if (!call.invocationId) throw new Error('tool gateway: the call has no invocation yet');
  return call.invocationId;
}

/** How a request that will not run ends the call that asked for it. */
function refusalOf(r: ActionRequest): { status: InvocationStatus; reasonCode: string } {
  if (r.status === 'rejected') return { status: 'denied', reasonCode: 'tool_call_declined' };
  if (r.status === 'expired') return { status: 'timed_out', reasonCode: 'tool_call_timed_out' };
  return { status: 'failed', reasonCode: 'approval_used' };
}

const text = (t: string, isError = false): CallToolResult => ({
  ...(isError ? { isError: true } : {}),
  content: [{ type: 'text', text: t }],
});
const fail = (code: string, message: string): CallToolResult => text(`Error (${code}): ${message}`, true);

/** The canonical JSON of a call's arguments (keys sorted): identical calls, identical digests. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v ?? null);
}

/**
 * The gateway to the company's remote tool connections. An agent in a run sees, beside the
 * service's own tools, each tool of its company's remote connections that its profiles do not deny,
 * named `<toolPrefix>__<tool>`; calling one makes the service call the remote server with the
 * connection's secret headers, so the credentials never reach the agent. An "ask" tool's call
 * waits as an action request until the board decides (or it times out, by the database's clock).
 * Every call is recorded in the activity log and as an event of the run.
 */
@Injectable()
export class ToolGateway {
  constructor(
    private readonly connections: ToolConnectionsService,
    private readonly repo: ToolConnectionsRepository,
    private readonly profiles: ToolProfilesService,
    private readonly requests: ToolActionRequestsRepository,
    private readonly invocations: ToolInvocationsRepository,
    private readonly recorder: ActivityRecorder,
    private readonly events: LiveEventBus,
    private readonly config: AppConfig,
  ) {}

  /** The agent's connection tools with their policies (denied ones left out). */
  async toolsFor(agent: AgentActor): Promise<Tool[]> {
    const listed = await this.allowed(agent);
    return listed.map(({ tool, policy }) => ({
      name: `${tool.toolPrefix}${PREFIX_SEPARATOR}${tool.toolName}`,
      ...(tool.title ? { title: tool.title } : {}),
      description:
        (tool.description ?? tool.toolName) +
        (policy === 'ask' ? '\n\n(Needs the board’s approval for each call: the call waits for it, or answers that it is pending.)' : ''),
      inputSchema: (tool.inputSchema && tool.inputSchema.type === 'object' ? tool.inputSchema : { type: 'object' }) as Tool['inputSchema'],
      ...(tool.annotations ? { annotations: tool.annotations as Tool['annotations'] } : {}),
    }));
  }

  /**
   * A call of a connection tool; null when the name is no tool of the agent's connections. Each call
   * is an invocation of the run (tool_invocations), from its start to its end.
   */
  async call(
    agent: AgentActor,
    name: string,
    args: Record<string, unknown>,
    toolUseId: string | null = null,
  ): Promise<CallToolResult | null> {
    const cut = name.indexOf(PREFIX_SEPARATOR);
    if (cut <= 0) return null;
    const prefix = name.slice(0, cut);
    const toolName = name.slice(cut + PREFIX_SEPARATOR.length);
    const entry = (await this.repo.activeRemoteTools(agent.companyId)).find((t) => t.toolPrefix === prefix && t.toolName === toolName);
    if (!entry) return null;
    const policy = await this.policy(agent, entry);
    const connection = await this.repo.findConnection(agent.companyId, entry.connectionId);
    if (!connection) return null;
    const call: Call = { agent, c: connection, toolName, args, toolUseId };
    if (policy === 'deny') {
      call.invocationId = await this.invocation(call, 'deny', 'denied', { reasonCode: 'tool_denied' });
      await this.record(call, 'denied', { durationMs: 0, resultBytes: 0 });
      return fail('tool_denied', `${name} is denied to you by your company's tool profiles`);
    }
    if (policy === 'ask') return this.ask(call);
    call.invocationId = await this.invocation(call, 'allow', 'executing');
    return this.forward(call);
  }

  private invocation(
    call: Call,
    decision: 'allow' | 'require_approval' | 'deny',
    status: InvocationStatus,
    extra: { actionRequestId?: string; reasonCode?: string } = {},
  ): Promise<string> {
    return this.invocations.insert(call.c.companyId, {
      agentId: call.agent.agentId,
      runId: call.agent.runId ?? null,
      connectionId: call.c.id,
      toolName: call.toolName,
      toolUseId: call.toolUseId,
      decision,
      status,
      ...extra,
    });
  }

  private async allowed(agent: AgentActor): Promise<Array<{ tool: Listed; policy: ToolPolicy }>> {
    const [tools, { profiles, entries }] = await Promise.all([
      this.repo.activeRemoteTools(agent.companyId),
      this.profiles.forAgent(agent.companyId, agent.agentId),
    ]);
    if (!profiles.length) return [];
    return tools
      .map((tool) => ({
        tool,
        policy: policyFor(profiles, entries, {
          applicationId: tool.applicationId,
          connectionId: tool.connectionId,
          toolName: tool.toolName,
          catalogEntryId: tool.id,
        }),
      }))
      .filter((t) => t.policy !== 'deny');
  }

  private async policy(agent: AgentActor, t: Listed): Promise<ToolPolicy> {
    const { profiles, entries } = await this.profiles.forAgent(agent.companyId, agent.agentId);
    return policyFor(profiles, entries, {
      applicationId: t.applicationId,
      connectionId: t.connectionId,
      toolName: t.toolName,
      catalogEntryId: t.id,
    });
  }

  /**
   * An "ask" call: it joins the open request of the same call (same agent, tool and arguments) or
   * opens one, then waits up to SERVICE_TOOL_APPROVAL_WAIT_SEC for the board. Approved: the call runs
   * (each approval once). Declined, or timed out: a tool error saying so (for the rest of this run;
   * a later run may ask again). Still pending: an error result telling the agent to go on and call
   * again later.
   */
  private async ask(call: Call): Promise<CallToolResult> {
    const { agent, c, toolName } = call;
    const digest = createHash('sha256').update(canonical(call.args)).digest('hex');
    let request = await this.requests.findOpen(c.companyId, agent.agentId, c.id, toolName, digest);
    if (!request) {
      const latest = await this.requests.findLatest(c.companyId, agent.agentId, c.id, toolName, digest);
      if (latest && latest.runId === (agent.runId ?? null) && (latest.status === 'rejected' || latest.status === 'expired')) {
        const { status, reasonCode } = refusalOf(latest);
        await this.invocation(call, 'require_approval', status, { actionRequestId: latest.id, reasonCode });
        return this.refused(latest);
      }
      request = await this.requests.insert(
        c.companyId,
        {
          agentId: agent.agentId,
          runId: agent.runId ?? null,
          connectionId: c.id,
          toolName,
          arguments: sanitizeDetails(call.args) as Record<string, unknown>,
          digest,
        },
        c.approvalTimeoutSec,
      );
      call.invocationId = await this.invocation(call, 'require_approval', 'awaiting_approval', { actionRequestId: request.id });
      await this.record(call, 'approval_requested', { durationMs: 0, resultBytes: 0, actionRequestId: request.id });
    } else {
      call.invocationId = await this.invocation(call, 'require_approval', 'awaiting_approval', { actionRequestId: request.id });
    }
    return this.await(call, request);
  }

  /** Waits for the board's decision on the call's request, then runs it, or says why not. */
  private async await(call: Call, pending: ActionRequest): Promise<CallToolResult> {
    const { c, toolName } = call;
    const invocationId = invocationOf(call);
    let request = pending;
    const deadline = Date.now() + this.config.tools.approvalWaitSec * 1000;
    while (request.status === 'pending' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      request = (await this.requests.find(c.companyId, request.id)) ?? request;
    }
    if (request.status === 'approved') {
      if (!(await this.requests.consume(c.companyId, request.id))) {
        await this.invocations.finish(c.companyId, invocationId, { status: 'failed', reasonCode: 'approval_used' });
        return fail('approval_used', 'This approval was already used by another call: call again to ask anew');
      }
      await this.invocations.executing(c.companyId, invocationId);
      return this.forward(call, request.id);
    }
    if (request.status === 'pending') {
      await this.invocations.finish(c.companyId, invocationId, { status: 'awaiting_approval', reasonCode: 'approval_pending' });
      return fail(
        'approval_pending',
        `Not run yet: ${c.toolPrefix}${PREFIX_SEPARATOR}${toolName} needs the board's approval (action request ${request.id}, ` +
          `open until ${request.expiresAt.toISOString()}). Go on with other work and call it again with the same arguments later; ` +
          'it runs once the board approves.',
      );
    }
    await this.invocations.finish(c.companyId, invocationId, refusalOf(request));
    return this.refused(request);
  }

  private refused(r: ActionRequest): CallToolResult {
    if (r.status === 'rejected')
      return fail(
        'tool_call_declined',
        `The board declined this call${r.decisionReason ? `: ${r.decisionReason}` : ''}. Do not retry it in this run.`,
      );
    if (r.status === 'expired')
      return fail(
        'tool_call_timed_out',
        `Nobody approved this call before ${r.expiresAt.toISOString()} (action request ${r.id} timed out). Do not retry it in this run.`,
      );
    return fail('approval_used', `Action request ${r.id} is ${r.status}`);
  }

  /** Calls the remote server with the connection's headers; the result leaves with every secret value scrubbed. */
  private async forward(call: Call, requestId?: string): Promise<CallToolResult> {
    const { c } = call;
    const started = Date.now();
    let secrets: string[] = [];
    let result: CallToolResult;
    let outcome: 'succeeded' | 'failed';
    let reasonCode: string | null = null;
    try {
      const headers = await this.connections.headersFor(c);
      secrets = headers.secrets;
      const remote = await new RemoteMcpClient(endpointOutbound(this.config)).callTool(
        c.transportConfig.url ?? '',
        headers.values,
        call.toolName,
        call.args,
      );
      result = JSON.parse(scrub(JSON.stringify(remote), secrets)) as CallToolResult;
      outcome = result.isError ? 'failed' : 'succeeded';
      if (result.isError) reasonCode = 'tool_error';
    } catch (err) {
      const refusal = refusalIn(err);
      const message = scrub(refusal ? refusal.message : (err as Error).message, secrets).slice(0, 1000);
      reasonCode = refusal ? 'url_not_allowed' : 'remote_unreachable';
      result = fail(reasonCode, `The tool server did not answer: ${message}`);
      outcome = 'failed';
      if (requestId) await this.requests.markFailed(c.companyId, requestId);
    }
    await this.repo.touch(c.companyId, c.id);
    const measured = { durationMs: Date.now() - started, resultBytes: Buffer.byteLength(JSON.stringify(result)) };
    await this.invocations.finish(c.companyId, invocationOf(call), { status: outcome, reasonCode, ...measured });
    await this.record(call, outcome, { ...measured, ...(requestId ? { actionRequestId: requestId } : {}) });
    return result;
  }

  /** The activity record (agent, run, invocation, tool, arguments redacted, duration, result size) and the run's event. */
  private async record(
    call: Call,
    outcome: 'succeeded' | 'failed' | 'denied' | 'approval_requested',
    extra: { durationMs: number; resultBytes: number; actionRequestId?: string },
  ): Promise<void> {
    const { agent, c } = call;
    const details = {
      connectionId: c.id,
      connection: c.name,
      tool: call.toolName,
      arguments: call.args,
      outcome,
      invocationId: call.invocationId ?? null,
      ...extra,
    };
    await this.recorder.record({
      companyId: c.companyId,
      action: outcome === 'approval_requested' ? 'tool.approval_requested' : outcome === 'denied' ? 'tool.call_denied' : 'tool.called',
      entityType: 'tool_connection',
      entityId: c.id,
      actor: agent,
      details,
    });
    if (agent.runId)
      this.events.publish(c.companyId, 'heartbeat.run.event', {
        runId: agent.runId,
        agentId: agent.agentId,
        issueId: null,
        eventType: 'tool.call',
        stream: 'system',
        level: outcome === 'failed' || outcome === 'denied' ? 'warn' : 'info',
        message: `${c.toolPrefix}${PREFIX_SEPARATOR}${call.toolName}: ${outcome}`,
        payload: sanitizeDetails(details),
        lastEventAt: new Date().toISOString(),
      });
  }
}
