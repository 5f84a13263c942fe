import { Injectable } from '@nestjs/common';

export interface LaunchContext {
  companyId: string;
  agentId: string;
  runId: string;
  projectId?: string | null;
  /** the run's private scratch folder and who owns it (files written for the run go under it) */
  scratch?: { dir: string; uid: number | null; gid: number | null };
}

/** Variables of a run's process with the secret values among them, which the run log redacts. */
export interface LaunchContribution {
  env: Record<string, string>;
  redactValues: string[];
}

/**
 * Extra variables for a run's process (e.g. the skills module's SERVICE_SKILLS_DIR, the tools
 * module's local MCP servers); failures are logged, never fatal.
 */
export type LaunchEnvironmentContributor = (ctx: LaunchContext) => Promise<Record<string, string> | LaunchContribution>;

/**
 * What other modules add to every run's launch environment, after the agent's own env (the skills
 * module's SERVICE_SKILLS_DIR, the tools module's local MCP servers): they import the heartbeat
 * module and add their contributor at start-up; a contributor's failure is logged, never fatal.
 */
@Injectable()
export class LaunchContributors {
  readonly #contributors: LaunchEnvironmentContributor[] = [];

  add(contributor: LaunchEnvironmentContributor): void {
    this.#contributors.push(contributor);
  }

  all(): readonly LaunchEnvironmentContributor[] {
    return this.#contributors;
  }
}
