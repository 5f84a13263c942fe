import { Injectable, OnModuleInit } from '@nestjs/common';
import { WorkCancellation } from '../../common/events/work-cancellation.port';
import { RunLifecycle } from './run-lifecycle.service';

/** The engine cancels the queued wakeups and live runs of a stopped scope (agent, project, company, issue). */
@Injectable()
export class RunCancellation implements OnModuleInit {
  constructor(
    private readonly cancellation: WorkCancellation,
    private readonly lifecycle: RunLifecycle,
  ) {}

  onModuleInit(): void {
    this.cancellation.register((scope, reason) => this.lifecycle.cancelScope(scope, reason));
  }
}
