import type { RuntimeFailure } from './coding-cli.runtime';
import { reachable } from './runtime-environment';

/** the CLI silent this long: its endpoint is probed */
const SILENT_MS = 2_000;

/**
 * For CLIs that retry a dead model endpoint without a word on their stream (OpenCode, Gemini CLI):
 * while the CLI prints nothing for SILENT_MS, its endpoint is probed (a TCP connection, from the
 * runtime's poll every 500 ms); `maxFailures` failed probes in a row are a `runtime_endpoint_unreachable`
 * failure. Any output line resets the count.
 */
export class EndpointProbe {
  failure: RuntimeFailure | null = null;
  private lastLineAt = Date.now();
  private probing = false;
  private failed = 0;

  constructor(
    private readonly endpoint: string | null,
    private readonly maxFailures: number,
  ) {}

  /** An output line arrived: the CLI is alive. */
  activity(): void {
    this.lastLineAt = Date.now();
    this.failed = 0;
  }

  poll(): void {
    if (!this.endpoint || this.probing || this.failure || Date.now() - this.lastLineAt < SILENT_MS) return;
    this.probing = true;
    const endpoint = this.endpoint;
    void reachable(endpoint, 2000).then((problem) => {
      this.probing = false;
      if (!problem) {
        this.failed = 0;
        return;
      }
      if (++this.failed >= this.maxFailures && !this.failure)
        this.failure = {
          code: 'runtime_endpoint_unreachable',
          message: `the model endpoint ${endpoint} is unreachable (${problem}, ${this.failed} tries)`,
        };
    });
  }
}

/** `maxConnectRetries` of a runtime's config (default 3). */
export const maxConnectRetries = (config: Record<string, unknown>): number => {
  const n = config.maxConnectRetries;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : 3;
};
