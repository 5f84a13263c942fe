import { Injectable } from '@nestjs/common';
import type { EngineAgentRecord } from './heartbeat.types';

/** An agent with an enabled timer, for GET /api/instance/scheduler-heartbeats. */
export interface TimerAgentRecord {
  id: string;
  companyId: string;
  name: string;
  status: string;
  runtimeConfig: Record<string, unknown>;
  heartbeatNextDueAt: Date | null;
  heartbeatLastFiredAt: Date | null;
}

/** An agent named by id with its company (a wake's agent, a due timer). */
export interface AgentRef {
  id: string;
  companyId: string;
}

/**
 * What the engine needs of the agents table, which the agents module owns. The agents module
 * imports this one (not the other way round), so it registers its implementation here at start-up
 * (agents/heartbeat-agents.port-impl.ts); the engine's statements on agents live in the agents module.
 */
export interface HeartbeatAgentStore {
  /**
   * The engine's per-agent mutex: the agent row, locked FOR NO KEY UPDATE in the current
   * transaction (agent writers and other instances wait, run inserts do not). Always taken before
   * the agent's run rows, so no two writers deadlock.
   */
  lock(companyId: string, agentId: string): Promise<EngineAgentRecord | null>;
  /** The agent a wakeup route names, in the route's company, or null. */
  findForWake(companyId: string, agentId: string): Promise<(AgentRef & { status: string }) | null>;
  /** A claimed run makes its agent `running` (from idle, active or error); whether it changed. */
  markRunning(companyId: string, agentId: string): Promise<boolean>;
  /** A `running` agent becomes `idle` or `error` (the caller holds the agent lock and has no running run left); whether it changed. */
  settleIfRunning(companyId: string, agentId: string, status: 'idle' | 'error'): Promise<boolean>;
  /** Claims up to 100 agents whose timer is due (skipping rows another instance holds), marking them fired. */
  claimDueTimers(): Promise<AgentRef[]>;
  /** One due agent not among `skip`, claimed the same way (the one-by-one path after a failed batch). */
  claimOneDueTimer(skip: string[]): Promise<AgentRef | null>;
  /** Non-terminated agents with an enabled timer (in the given companies, or all for null), by next due time. */
  timerAgents(companyIds: string[] | null): Promise<TimerAgentRecord[]>;
}

/** The port: the engine calls it; the agents module fills it in at start-up. */
@Injectable()
export class HeartbeatAgents implements HeartbeatAgentStore {
  private store?: HeartbeatAgentStore;

  register(store: HeartbeatAgentStore): void {
    this.store = store;
  }

  private get impl(): HeartbeatAgentStore {
    if (!this.store) throw new Error('HeartbeatAgents: the agents module has not registered its store');
    return this.store;
  }

  lock(companyId: string, agentId: string): Promise<EngineAgentRecord | null> {
    return this.impl.lock(companyId, agentId);
  }

  findForWake(companyId: string, agentId: string): Promise<(AgentRef & { status: string }) | null> {
    return this.impl.findForWake(companyId, agentId);
  }

  markRunning(companyId: string, agentId: string): Promise<boolean> {
    return this.impl.markRunning(companyId, agentId);
  }

  settleIfRunning(companyId: string, agentId: string, status: 'idle' | 'error'): Promise<boolean> {
    return this.impl.settleIfRunning(companyId, agentId, status);
  }

  claimDueTimers(): Promise<AgentRef[]> {
    return this.impl.claimDueTimers();
  }

  claimOneDueTimer(skip: string[]): Promise<AgentRef | null> {
    return this.impl.claimOneDueTimer(skip);
  }

  timerAgents(companyIds: string[] | null): Promise<TimerAgentRecord[]> {
    return this.impl.timerAgents(companyIds);
  }
}
