import { Injectable } from '@nestjs/common';

/**
 * What budgets asks of the companies module about a company scope. The companies module imports
 * budgets (budget sync), so budgets cannot import it: it registers this at start-up instead.
 */
export interface CompanyBudgetOwner {
  /** Pauses the company (reason `budget`) when it is active; other pause reasons stay. */
  pause(companyId: string): Promise<void>;
  /** Resumes a company its budget paused; true when it did. */
  resume(companyId: string): Promise<boolean>;
  /** Sets budgetMonthlyCents; the company's spentMonthlyCents, or null when there is no such company. */
  setMonthlyBudget(companyId: string, cents: number): Promise<{ spentMonthlyCents: number } | null>;
  /**
   * spentMonthlyCents becomes the company's running total of the calendar month starting at `month`.
   * Sent at once (no await before its statement), so that it travels in the cost event's pipeline.
   */
  syncMonthlySpend(companyId: string, month: Date): Promise<void>;
  /** Locks the company row until commit: budget changes of a company run one at a time. */
  lock(companyId: string): Promise<void>;
  /** The company's budget columns (null when there is no such company). */
  budget(
    companyId: string,
  ): Promise<{ budgetMonthlyCents: number; spentMonthlyCents: number; status: string; pauseReason: string | null } | null>;
}

/** What budgets asks of the agents module (which imports budgets) about agent scopes. */
export interface AgentBudgetOwner {
  /** Pauses the agent (reason `budget`) when its status allows it (terminated and pending ones stay). */
  pause(companyId: string, agentId: string): Promise<void>;
  /** A company stop: every pausable agent of the company, reason `budget`. */
  pauseAll(companyId: string): Promise<void>;
  /** Resumes an agent its budget paused; true when it did. */
  resume(companyId: string, agentId: string): Promise<boolean>;
  /** A company resume: its agents the budget paused, except `stillHeld` (agents with a hold of their own). */
  resumeAll(companyId: string, stillHeld: string[]): Promise<void>;
  /** Sets budgetMonthlyCents of the agent. */
  setMonthlyBudget(companyId: string, agentId: string, cents: number): Promise<void>;
  /**
   * spentMonthlyCents becomes the running total of the month starting at `month`, of one agent or
   * (agentId omitted) of every agent of the company. Sent at once, like the company's.
   */
  syncMonthlySpend(companyId: string, month: Date, agentId?: string): Promise<void>;
}

/** What budgets asks of the projects module (which imports budgets) about project scopes. */
export interface ProjectBudgetOwner {
  /** Pauses the project (reason `budget`) unless it is paused already. */
  pause(companyId: string, projectId: string): Promise<void>;
  /** Resumes a project its budget paused; true when it did. */
  resume(companyId: string, projectId: string): Promise<boolean>;
}

function unregistered(owner: string): never {
  throw new Error(`budget scope owner '${owner}' is not registered`);
}

/**
 * The owners of the scopes a budget acts on (pause, resume, the budget and spend columns): the
 * companies, agents and projects modules import budgets and register their part at start-up
 * (`onModuleInit`), so each keeps its table and budgets imports none of them. A part asked before
 * its owner registered fails loudly: a budget stop must never be dropped silently.
 */
@Injectable()
export class BudgetScopeOwners {
  #company: CompanyBudgetOwner | null = null;
  #agents: AgentBudgetOwner | null = null;
  #projects: ProjectBudgetOwner | null = null;

  registerCompanies(owner: CompanyBudgetOwner): void {
    this.#company = owner;
  }

  registerAgents(owner: AgentBudgetOwner): void {
    this.#agents = owner;
  }

  registerProjects(owner: ProjectBudgetOwner): void {
    this.#projects = owner;
  }

  get company(): CompanyBudgetOwner {
    return this.#company ?? unregistered('companies');
  }

  get agents(): AgentBudgetOwner {
    return this.#agents ?? unregistered('agents');
  }

  get projects(): ProjectBudgetOwner {
    return this.#projects ?? unregistered('projects');
  }
}
