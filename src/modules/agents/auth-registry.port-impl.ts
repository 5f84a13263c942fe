import { Injectable, OnModuleInit } from '@nestjs/common';
import { AuthRegistry } from '../../common/auth/auth-registry.port';
import { AgentKeyResolver } from './agent-key.resolver';

/** Agent API keys (`ak` tokens) are resolved here, for the guard. */
@Injectable()
export class AgentKeyRegistration implements OnModuleInit {
  constructor(
    private readonly registry: AuthRegistry,
    private readonly keyResolver: AgentKeyResolver,
  ) {}

  onModuleInit(): void {
    this.registry.addResolver(this.keyResolver);
  }
}
