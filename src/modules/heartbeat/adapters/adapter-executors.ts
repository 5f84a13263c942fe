import { Injectable } from '@nestjs/common';
import type { AdapterExecutor } from './adapter.types';
import { CLI_RUNTIMES, CliRuntimeAdapter } from './cli-runtime.adapter';
import { GatewayAdapter } from './gateway.adapter';
import { HttpAdapter } from './http.adapter';
import { ProcessAdapter } from './process.adapter';

/**
 * Executors by adapter type. Built-ins are registered here; external types join with register().
 * (Which types exist and their create-time validation is the adapters module's registry.)
 */
@Injectable()
export class AdapterExecutors {
  private readonly byType = new Map<string, AdapterExecutor>();

  constructor() {
    this.register(new ProcessAdapter());
    this.register(new HttpAdapter());
    for (const d of CLI_RUNTIMES) this.register(new CliRuntimeAdapter(d));
    this.register(new GatewayAdapter());
  }

  register(executor: AdapterExecutor): void {
    this.byType.set(executor.type, executor);
  }

  get(type: string): AdapterExecutor | undefined {
    return this.byType.get(type);
  }

  types(): string[] {
    return [...this.byType.keys()];
  }
}
