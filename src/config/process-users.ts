/**
 * The process-user settings the config loader reads and checks: whether the service runs as root
 * (identities of their own for agents and plugin workers are possible only then) and the plugin
 * worker's user name (SERVICE_PLUGIN_USER). The users themselves are made in
 * src/common/process (agent-user.ts, worker-identity.ts), which import these from here.
 */

export const runningAsRoot = (): boolean => process.getuid?.() === 0;

export const DEFAULT_PLUGIN_USER = 'service-plugin';

const USER_NAME = /^[a-z_][a-z0-9_-]{0,30}$/;

/** The configured plugin worker user name. */
export function pluginUserFromEnv(env: NodeJS.ProcessEnv): string {
  return (env.SERVICE_PLUGIN_USER ?? '').trim() || DEFAULT_PLUGIN_USER;
}

/** A problem with SERVICE_PLUGIN_USER, or null (checked by the config loader). */
export function validatePluginUser(env: NodeJS.ProcessEnv): string | null {
  const raw = (env.SERVICE_PLUGIN_USER ?? '').trim();
  if (!raw) return null;
  if (!USER_NAME.test(raw)) return `SERVICE_PLUGIN_USER must be a system user name, got "${raw}"`;
  if (raw === 'root' || raw === 'postgres') return `SERVICE_PLUGIN_USER must not be ${raw}: plugin workers need a user of their own`;
  const agentUser = (env.SERVICE_AGENT_USER ?? '').trim() || 'service-agent';
  if (raw === agentUser)
    return `SERVICE_PLUGIN_USER must differ from the agent user ("${agentUser}"): plugin workers need a user of their own`;
  return null;
}
