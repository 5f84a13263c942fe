/**
 * The model providers the coding-agent CLIs talk to: the variable an agent's env gives the key in,
 * the variable that points the CLI at another endpoint, the vendor's endpoint otherwise, and how to
 * ask the provider which models a key may use (a free call: it checks the key without a model turn).
 * AI connections, the environment test and `detect-model` read this one table.
 */
export type ModelApi = 'anthropic' | 'openai' | 'gemini';

export interface ModelProvider {
  id: string;
  label: string;
  /** the variable the key goes into (an agent's env, as a secret reference) */
  keyEnv: string;
  /** the variable that replaces the vendor's endpoint, and that endpoint */
  baseUrlEnv: string;
  defaultBaseUrl: string;
  /** the protocol of its model list */
  api: ModelApi;
  /** the prefix of OpenCode's `<provider>/<model>` names for it */
  opencodePrefix: string;
}

/** Which connections a coding CLI runs with (its runtime file says: `CliSpec.aiProviders`, `modelNamesProvider`). */
export interface RuntimeProviders {
  /** ids of MODEL_PROVIDERS whose key can run it, its own vendor first */
  aiProviders: readonly string[];
  /** its model names the provider (`<provider>/<model>`, OpenCode's names) */
  modelNamesProvider?: boolean;
}

export const MODEL_PROVIDERS: Record<string, ModelProvider> = {
  anthropic: {
    id: 'anthropic',
    label: 'Anthropic',
    keyEnv: 'ANTHROPIC_API_KEY',
    baseUrlEnv: 'ANTHROPIC_BASE_URL',
    defaultBaseUrl: 'https://api.anthropic.com',
    api: 'anthropic',
    opencodePrefix: 'anthropic',
  },
  openai: {
    id: 'openai',
    label: 'OpenAI',
    keyEnv: 'OPENAI_API_KEY',
    baseUrlEnv: 'OPENAI_BASE_URL',
    defaultBaseUrl: 'https://api.openai.com/v1',
    api: 'openai',
    opencodePrefix: 'openai',
  },
  gemini: {
    id: 'gemini',
    label: 'Google Gemini',
    keyEnv: 'GEMINI_API_KEY',
    baseUrlEnv: 'GOOGLE_GEMINI_BASE_URL',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com',
    api: 'gemini',
    opencodePrefix: 'google',
  },
  openrouter: {
    id: 'openrouter',
    label: 'OpenRouter',
    keyEnv: 'OPENROUTER_API_KEY',
    baseUrlEnv: 'OPENROUTER_BASE_URL',
    defaultBaseUrl: 'https://openrouter.ai/api/v1',
    api: 'openai',
    opencodePrefix: 'openrouter',
  },
};

export const MODEL_PROVIDER_IDS = Object.keys(MODEL_PROVIDERS);

/** The provider of an OpenCode model name (`anthropic/claude-sonnet-4-5` → anthropic), or null. */
export function providerOfOpencodeModel(model: string | null | undefined): ModelProvider | null {
  if (!model || !model.includes('/')) return null;
  const prefix = model.slice(0, model.indexOf('/'));
  return Object.values(MODEL_PROVIDERS).find((p) => p.opencodePrefix === prefix) ?? null;
}

/** The provider a runtime reaches with a given model: the model's own where the model names it, else the runtime's vendor; null for no coding CLI. */
export function providerForRuntime(runtime: RuntimeProviders | null, model: string | null | undefined): ModelProvider | null {
  if (!runtime) return null;
  if (runtime.modelNamesProvider) return providerOfOpencodeModel(model);
  return modelProvider(runtime.aiProviders[0] ?? '');
}

/** The board UI names Gemini `google` in places (OpenCode's prefix); both mean the same provider. */
export function modelProvider(id: string): ModelProvider | null {
  return MODEL_PROVIDERS[id === 'google' ? 'gemini' : id] ?? null;
}
