import { Injectable, OnModuleInit } from '@nestjs/common';
import { RunLifecycleEvents } from '../heartbeat/run-lifecycle-events.port';
import { IssueCheckout } from './issue-checkout.service';

/** Runs that end without succeeding (including runs reaped after their instance died) release their checkouts. */
@Injectable()
export class RunCheckoutRelease implements OnModuleInit {
  constructor(
    private readonly runEvents: RunLifecycleEvents,
    private readonly checkouts: IssueCheckout,
  ) {}

  onModuleInit(): void {
    this.runEvents.onRunFinished((e) =>
      e.status === 'succeeded' ? undefined : this.checkouts.releaseRunCheckouts(e.companyId, e.runId, e.errorCode ?? e.status),
    );
  }
}
