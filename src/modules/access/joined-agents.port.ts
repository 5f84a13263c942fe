import { Injectable } from '@nestjs/common';

/** The agent an approved agent join request creates. */
export interface JoinedAgentInsert {
  name: string;
  urlKey: string;
  capabilities: string;
  adapterType: string;
  joinRequestId: string;
}

/** An agent API key as the claim answers it (never its hash). */
export interface JoinedAgentKey {
  id: string;
  agentId: string;
  companyId: string;
  name: string;
  createdAt: Date;
}

/** What join requests need of the agents tables (owned by agents). */
export interface JoinedAgentStore {
  /** The agent's status in the company, or undefined when it is not there. */
  status(companyId: string, agentId: string): Promise<string | undefined>;
  /** The new agent's id, or undefined when its URL key is taken in the company. */
  insertUnlessUrlKeyTaken(companyId: string, a: JoinedAgentInsert): Promise<string | undefined>;
  /** A new API key of the agent (only its hash and display prefix are stored). */
  insertApiKey(companyId: string, agentId: string, name: string, tokenHash: string, tokenPrefix: string): Promise<JoinedAgentKey>;
}

/**
 * The agents an approved join request creates, and their first key. Agents reads the access
 * tables (memberships), so access does not import agents: the agents module registers its store
 * here at start-up (src/modules/agents/joined-agents.repository.ts).
 */
@Injectable()
export class JoinedAgents {
  private store?: JoinedAgentStore;

  register(store: JoinedAgentStore): void {
    this.store = store;
  }

  get agents(): JoinedAgentStore {
    if (!this.store) throw new Error('JoinedAgents: the agents module has not registered its store');
    return this.store;
  }
}
