import { Injectable } from '@nestjs/common';
import type { GrantDto, MembershipDto } from './dto/agent.dto';

/**
 * An agent's company membership and permission grants, as the agents routes read and change them.
 * The tables are the access module's, and access imports this module (not the other way round):
 * access registers its implementation here at start-up (access/agent-memberships.port-impl.ts).
 */
export interface AgentMembershipStore {
  findMembership(companyId: string, agentId: string): Promise<MembershipDto | null>;
  listGrants(companyId: string, agentId: string): Promise<GrantDto[]>;
  /** An active `member` membership (no grants); an inactive one is reactivated. */
  ensureMembership(companyId: string, agentId: string): Promise<void>;
  deleteTaskAssignGrant(companyId: string, agentId: string): Promise<void>;
  /** A company-wide tasks:assign grant. */
  insertTaskAssignGrant(companyId: string, agentId: string, grantedBy: string): Promise<void>;
  /** A deleted agent's grants and membership go. */
  deleteAll(companyId: string, agentId: string): Promise<void>;
}

/** The port the agents services call; the access module fills it in at start-up. */
@Injectable()
export class AgentMemberships implements AgentMembershipStore {
  private store?: AgentMembershipStore;

  register(store: AgentMembershipStore): void {
    this.store = store;
  }

  private get impl(): AgentMembershipStore {
    if (!this.store) throw new Error('AgentMemberships: the access module has not registered its store');
    return this.store;
  }

  findMembership(companyId: string, agentId: string): Promise<MembershipDto | null> {
    return this.impl.findMembership(companyId, agentId);
  }

  listGrants(companyId: string, agentId: string): Promise<GrantDto[]> {
    return this.impl.listGrants(companyId, agentId);
  }

  ensureMembership(companyId: string, agentId: string): Promise<void> {
    return this.impl.ensureMembership(companyId, agentId);
  }

  deleteTaskAssignGrant(companyId: string, agentId: string): Promise<void> {
    return this.impl.deleteTaskAssignGrant(companyId, agentId);
  }

  insertTaskAssignGrant(companyId: string, agentId: string, grantedBy: string): Promise<void> {
    return this.impl.insertTaskAssignGrant(companyId, agentId, grantedBy);
  }

  deleteAll(companyId: string, agentId: string): Promise<void> {
    return this.impl.deleteAll(companyId, agentId);
  }
}
