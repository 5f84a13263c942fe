import * as path from 'node:path';

/** The model providers whose endpoint an operator may name (the ids of AI connections). */
export const AI_PROVIDER_IDS = ['anthropic', 'openai', 'gemini', 'openrouter'] as const;

/** Where the coding-agent CLIs are found and where model providers are reached by default. */
export interface RuntimeSettings {
  /** SERVICE_CLI_PATH: absolute folders searched for a CLI's bare name (`claude`) before PATH */
  cliPath: string[];
  /**
   * SERVICE_AI_BASE_URLS: the endpoint of a provider for AI connections that name none
   * (`anthropic=http://127.0.0.1:4010,openai=https://gateway.example/v1`); the operator's choice, so
   * a loopback or private address is allowed there
   */
  aiBaseUrls: Partial<Record<(typeof AI_PROVIDER_IDS)[number], string>>;
}

export function loadRuntimeSettings(env: NodeJS.ProcessEnv): RuntimeSettings {
  const cliPath = (env.SERVICE_CLI_PATH ?? '')
    .split(':')
    .map((d) => d.trim())
    .filter(Boolean);
  const relative = cliPath.find((d) => !path.isAbsolute(d));
  if (relative) throw new Error(`SERVICE_CLI_PATH must list absolute folders separated by ':', got "${relative}"`);
  const aiBaseUrls: RuntimeSettings['aiBaseUrls'] = {};
  for (const entry of (env.SERVICE_AI_BASE_URLS ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const eq = entry.indexOf('=');
    const id = entry.slice(0, Math.max(eq, 0)).trim() as (typeof AI_PROVIDER_IDS)[number];
    const url = entry.slice(eq + 1).trim();
    if (eq <= 0 || !AI_PROVIDER_IDS.includes(id))
      throw new Error(
        `SERVICE_AI_BASE_URLS entries are <provider>=<url> with provider one of ${AI_PROVIDER_IDS.join(', ')}; got "${entry}"`,
      );
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new Error(`SERVICE_AI_BASE_URLS: "${url}" (${id}) is not a URL`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`SERVICE_AI_BASE_URLS: ${id} must be an http(s) URL`);
    aiBaseUrls[id] = url.replace(/\/+$/, '');
  }
  return { cliPath, aiBaseUrls };
}
