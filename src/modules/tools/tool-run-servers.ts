import { Injectable } from '@nestjs/common';
import { LOCAL_MCP_SERVERS_ENV, type LocalMcpServer } from '../adapters/runtimes/mcp-config';
import type { LaunchContext, LaunchContribution } from '../heartbeat/launch-contributors.port';
import { ToolConnectionsRepository } from './tool-connections.repository';
import { ToolConnectionsService } from './tool-connections.service';
import { policyFor } from './tool-policy';
import { ToolProfilesService } from './tool-profiles.service';

/**
 * The local connections of a run: each active local connection the agent's profiles do not deny
 * becomes an MCP server of the run's CLI configuration (its command, run by the CLI under the
 * agent's own identity). Secret variables reach the CLI's environment under names of their own,
 * which the configuration references (never written into a file), and the run log redacts them.
 * Tools a profile denies by name are left out where the CLI can do so.
 */
@Injectable()
export class ToolRunServers {
  constructor(
    private readonly repo: ToolConnectionsRepository,
    private readonly connections: ToolConnectionsService,
    private readonly profiles: ToolProfilesService,
  ) {}

  async forRun(ctx: LaunchContext): Promise<LaunchContribution> {
    const locals = await this.repo.activeLocalConnections(ctx.companyId);
    if (!locals.length) return { env: {}, redactValues: [] };
    const { profiles, entries } = await this.profiles.forAgent(ctx.companyId, ctx.agentId);
    const env: Record<string, string> = {};
    const redactValues: string[] = [];
    const servers: LocalMcpServer[] = [];
    for (const c of locals) {
      const target = { applicationId: c.applicationId, connectionId: c.id, catalogEntryId: null };
      if (policyFor(profiles, entries, { ...target, toolName: '\u0000' }) === 'deny') continue;
      const named = entries.filter(
        (e) => e.selectorType === 'tool_name' && e.toolName && (e.connectionId === null || e.connectionId === c.id),
      );
      const disabledTools = [...new Set(named.map((e) => e.toolName!))].filter(
        (t) => policyFor(profiles, entries, { ...target, toolName: t }) === 'deny',
      );
      const creds = await this.connections.resolveCredentials(c, 'env');
      const secretEnv: Record<string, string> = {};
      for (const [name, value] of Object.entries(creds.values)) {
        const carrier = `SERVICE_MCP_${c.toolPrefix.toUpperCase()}_${name}`.replace(/[^A-Za-z0-9_]/g, '_');
        env[carrier] = value;
        secretEnv[name] = carrier;
      }
      redactValues.push(...creds.secrets);
      servers.push({
        name: c.toolPrefix,
        command: c.transportConfig.command ?? '',
        args: c.transportConfig.args ?? [],
        env: c.transportConfig.env ?? {},
        secretEnv,
        disabledTools,
      });
    }
    if (servers.length) env[LOCAL_MCP_SERVERS_ENV] = JSON.stringify(servers);
    return { env, redactValues };
  }
}
