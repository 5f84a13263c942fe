import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { AuthorizationService } from '../authorization/authorization.service';
import * as path from 'node:path';
import { AgentIdentities } from '../../common/process/agent-identities';
import { findCommand } from '../../common/process/agent-sandbox';
import { inaccessibleReason, unexecutableReason, unreadableReason } from '../../common/process/agent-user';
import { resolveCliCommand } from '../adapters/runtimes/cli-command';
import { CodingCliRuntime } from '../adapters/runtimes/coding-cli.runtime';
import { AdapterExecutors } from '../adapters/adapter-executors';
import { AgentLookup } from './agent-lookup.service';
import { AgentEnvironmentReportDto } from './dto/agent.dto';

/** `POST /api/agents/{agentId}/test-environment`: the adapter's own environment check, on demand. */
@Injectable()
export class AgentEnvironmentService {
  constructor(
    private readonly lookup: AgentLookup,
    private readonly authz: AuthorizationService,
    private readonly executors: AdapterExecutors,
    private readonly identities: AgentIdentities,
  ) {}

  /**
   * Whether the agent's own OS identity can run its command, read the scripts it is given and
   * enter its working directory (the run would fail at wake otherwise), or null when no local
   * process or no identity of its own is involved.
   */
  private identityCheck(
    agentId: string,
    companyId: string,
    adapterType: string,
    config: Record<string, unknown>,
  ): { name: string; ok: boolean; message: string } | null {
    // a coding CLI runs its default command when none is configured, found as its run finds it (SERVICE_CLI_PATH, then PATH)
    const executor = this.executors.get(adapterType);
    const cli = executor instanceof CodingCliRuntime ? executor : null;
    const command = typeof config.command === 'string' && config.command ? config.command : cli?.spec.defaultCommand;
    if (!command) return null;
    let identity;
    try {
      identity = this.identities.forAgent(agentId, companyId);
    } catch (err) {
      return { name: 'agent_identity', ok: false, message: (err as Error).message };
    }
    if (!identity) return null;
    const resolved = cli
      ? resolveCliCommand(command, cli.host.cliPath, process.env.PATH).path
      : (findCommand(command, process.env.PATH ?? '') ?? command);
    // a CLI that is not found is the executor's own check (adapter_command_not_found)
    if (!resolved) return null;
    const args = Array.isArray(config.args) ? config.args.filter((a): a is string => typeof a === 'string' && path.isAbsolute(a)) : [];
    const problem =
      [resolved, ...args].map((p) => unreadableReason(p, identity)).find((r) => r !== null) ??
      unexecutableReason(resolved, identity) ??
      (typeof config.cwd === 'string' && config.cwd ? inaccessibleReason(config.cwd, identity) : null);
    return problem
      ? { name: 'agent_identity', ok: false, message: `${problem} (adapter_command_not_accessible)` }
      : { name: 'agent_identity', ok: true, message: `runs as ${identity.user} (uid ${identity.uid}); its command and files are readable` };
  }

  /** Board callers of the company, or agents allowed to create agents (`agents:create`). Nothing is stored. */
  async test(actor: Actor, routeCompanyId: string | undefined, agentId: string): Promise<AgentEnvironmentReportDto> {
    const agent = await this.lookup.byId(routeCompanyId, agentId);
    if (actor.kind === 'agent')
      await this.authz.assert({ actor, action: 'agent.create', companyId: agent.companyId, targetAgentId: agent.id });
    const executor = this.executors.get(agent.adapterType);
    const report = executor
      ? await executor.testEnvironment(agent.adapterConfig ?? {})
      : {
          ok: false,
          checks: [{ name: 'adapter', ok: false, message: `No executor for adapter type ${agent.adapterType} on this instance` }],
        };
    const access = this.identityCheck(agent.id, agent.companyId, agent.adapterType, agent.adapterConfig ?? {});
    const checks = access ? [...report.checks, access] : report.checks;
    return {
      agentId: agent.id,
      adapterType: agent.adapterType,
      ok: report.ok && (access?.ok ?? true),
      checks,
      testedAt: new Date().toISOString(),
    };
  }
}
