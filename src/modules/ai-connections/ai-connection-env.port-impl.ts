import { Injectable, OnModuleInit } from '@nestjs/common';
import { AiConnectionEnv } from '../adapters/runtimes/ai-connection-env.port';
import { AiConnectionBindings } from './ai-connection-bindings.service';

/** Agents and the new-agent form's environment test reach the company's AI connections through the adapters' port. */
@Injectable()
export class AiConnectionEnvRegistration implements OnModuleInit {
  constructor(
    private readonly port: AiConnectionEnv,
    private readonly bindings: AiConnectionBindings,
  ) {}

  onModuleInit(): void {
    this.port.register(this.bindings);
  }
}
