import { Injectable } from '@nestjs/common';
import { AgentLookup } from '../agents/agent-lookup.service';

/** Agents that can be woken at all; the heartbeat engine applies its own pause/budget policy on top. */
const UNWAKEABLE = new Set(['terminated', 'pending_approval']);

/** The agents issue rules ask about, through the agents module's lookup (agents own their table). */
@Injectable()
export class IssueAgents {
  constructor(private readonly agents: AgentLookup) {}

  /** The status of an agent of the company, or null (unknown, or of another company). */
  async statusIn(companyId: string, agentId: string): Promise<{ status: string } | null> {
    const status = await this.agents.statusIn(companyId, agentId);
    return status === null ? null : { status };
  }

  /** Whether the agent can be woken at all. */
  async isWakeable(agentId: string): Promise<boolean> {
    const status = await this.agents.statusOf(agentId);
    return status !== null && !UNWAKEABLE.has(status);
  }

  /** Wakeable agents of the company, longest name first (mention matching). */
  async wakeable(companyId: string): Promise<Array<{ id: string; name: string }>> {
    const agents = await this.agents.companyAgents(companyId);
    return agents
      .filter((a) => !UNWAKEABLE.has(a.status))
      .map((a) => ({ id: a.id, name: a.name }))
      .sort((a, b) => b.name.length - a.name.length);
  }
}
