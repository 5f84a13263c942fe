'use strict';

/**
 * An external adapter: the same contract the built-in adapters follow. The service loads this module
 * in its own process; `execute` runs one heartbeat run and resolves with its outcome.
 */
const CODE_VERSION = 'v1';

module.exports = {
  type: 'echo_external',
  label: 'Echo (example external adapter)',
  /** the service's config-schema subset: string, integer, number, boolean, string-array, string-map, object, env */
  configSchema: {
    type: 'object',
    properties: {
      message: { type: 'string', description: 'what the run echoes' },
      greeting: { type: 'string', description: 'usually set instance-wide (PATCH /api/adapters/echo_external)' },
      delayMs: { type: 'integer', minimum: 0, maximum: 600000, description: 'how long the run takes' },
      fail: { type: 'boolean', description: 'end the run as failed' },
    },
  },

  /** ctx: runId, agentId, companyId, config (instance config merged under the agent's), context, apiUrl, runToken, log(stream, text), signal */
  async execute(ctx) {
    const { config } = ctx;
    const text = `${config.greeting ?? 'hello'} ${config.message ?? ''}`.trim();
    ctx.log('stdout', `echo ${CODE_VERSION}: ${text}\n`);
    if (config.delayMs) {
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, config.delayMs);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (ctx.signal.aborted) return { status: 'cancelled', errorCode: 'cancelled', error: String(ctx.signal.reason ?? 'cancelled') };
    }
    if (config.fail) return { status: 'failed', errorCode: 'echo_failed', error: 'asked to fail' };
    return { status: 'succeeded', result: { echoed: text, codeVersion: CODE_VERSION, config } };
  },

  /** environment check: nothing to check for an echo */
  async testEnvironment() {
    return { ok: true, checks: [{ name: 'echo', ok: true, message: 'always available' }] };
  },
};
