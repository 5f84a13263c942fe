import { Global, Module, OnModuleInit } from '@nestjs/common';
import { ActorResolver } from './actor-resolver';
import { AgentKeyResolver } from './agent-key.resolver';
import { AuthRegistry } from './auth-registry';
import { AuthGuard } from './auth.guard';
import { AuthRepository } from './auth.repository';
import { CompanyAccessService } from './company-access.service';
import { DbRunVerifier } from './run-verifier';

@Global()
@Module({
  providers: [AuthRegistry, ActorResolver, AuthGuard, CompanyAccessService, AgentKeyResolver, DbRunVerifier, AuthRepository],
  exports: [AuthRegistry, ActorResolver, AuthGuard, CompanyAccessService],
})
export class AuthModule implements OnModuleInit {
  constructor(
    private readonly registry: AuthRegistry,
    private readonly agentKeys: AgentKeyResolver,
    private readonly runs: DbRunVerifier,
  ) {}

  onModuleInit(): void {
    this.registry.addResolver(this.agentKeys);
    this.registry.runVerifier ??= this.runs;
  }
}
