import { Global, Module } from '@nestjs/common';
import { ActorResolver } from './actor-resolver';
import { AuthRegistry } from './auth-registry.port';
import { AuthGuard } from './auth.guard';
import { AuthRepository } from './auth.repository';
import { CompanyAccessService } from './company-access.service';
import { LocalPeers } from './local-peers';

/**
 * The guard and its registry. Credential resolvers and the live-run check are registered by the
 * modules that own them (agents: API keys; heartbeat: run tokens and live runs; users: sessions
 * and board tokens).
 */
@Global()
@Module({
  providers: [AuthRegistry, ActorResolver, AuthGuard, CompanyAccessService, AuthRepository, LocalPeers],
  exports: [AuthRegistry, ActorResolver, AuthGuard, CompanyAccessService, LocalPeers],
})
export class AuthModule {}
