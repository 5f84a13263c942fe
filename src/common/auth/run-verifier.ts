import { Injectable } from '@nestjs/common';
import type { RunVerifier } from './auth-registry';
import { AuthRepository } from './auth.repository';

/** A run is live while it is queued or running; it must belong to the calling agent. */
@Injectable()
export class DbRunVerifier implements RunVerifier {
  constructor(private readonly repo: AuthRepository) {}

  isLiveRun(runId: string, agentId: string): Promise<boolean> {
    return this.repo.isLiveRun(runId, agentId);
  }
}
