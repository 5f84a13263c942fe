import { Injectable } from '@nestjs/common';

/** What a hire decision does to the hired agent: the agents module's part (agents imports approvals). */
export interface HiredAgentsOwner {
  /** An approved hire: its pending_approval agent becomes idle (a paused hire stays paused). */
  activate(companyId: string, agentId: string): Promise<void>;
  /** A rejected hire: its agent is terminated and its keys revoked; whether it was not terminated already. */
  terminate(companyId: string, agentId: string): Promise<boolean>;
}

/**
 * The port a hire decision moves its agent through. The agents module imports approvals (it asks
 * for pending hires), so approvals cannot import it: agents registers its part at start-up, and the
 * agents table stays the agents module's.
 */
@Injectable()
export class HiredAgents {
  #owner: HiredAgentsOwner | null = null;

  register(owner: HiredAgentsOwner): void {
    this.#owner = owner;
  }

  get owner(): HiredAgentsOwner {
    if (!this.#owner) throw new Error('the hired agents owner (agents module) is not registered');
    return this.#owner;
  }
}
