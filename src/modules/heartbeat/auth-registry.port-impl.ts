import { Injectable, OnModuleInit } from '@nestjs/common';
import { AuthRegistry } from '../../common/auth/auth-registry.port';
import { RunClaimsRepository } from './run-claims.repository';
import { RunTokenResolver } from './run-token.resolver';

/** The engine's part of the guard: run tokens (`Authorization: Bearer` of a live run), and whether a run is live. */
@Injectable()
export class RunAuthRegistration implements OnModuleInit {
  constructor(
    private readonly registry: AuthRegistry,
    private readonly runTokens: RunTokenResolver,
    private readonly claims: RunClaimsRepository,
  ) {}

  onModuleInit(): void {
    this.registry.addResolver(this.runTokens);
    // the guard's "is this run of the calling agent live" check
    this.registry.runVerifier = { isLiveRun: (companyId, runId, agentId) => this.claims.isLiveRun(companyId, runId, agentId) };
  }
}
