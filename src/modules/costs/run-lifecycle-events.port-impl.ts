import { Injectable, OnModuleInit } from '@nestjs/common';
import { RunLifecycleEvents } from '../heartbeat/run-lifecycle-events.port';
import { RunCostBooking } from './run-cost-booking.service';

/** A run's usage is booked when it ends, and what its process reported after that when it settles. */
@Injectable()
export class RunCostHooks implements OnModuleInit {
  constructor(
    private readonly runEvents: RunLifecycleEvents,
    private readonly booking: RunCostBooking,
  ) {}

  onModuleInit(): void {
    this.runEvents.onRunFinished((e) => this.booking.book(e));
    this.runEvents.onUsageSettled((e) => this.booking.settle(e));
  }
}
