import { Injectable, OnModuleInit } from '@nestjs/common';
import { RunLifecycleEvents } from '../heartbeat/run-lifecycle-events.port';
import { MetricsService } from './metrics.service';

/** The run histograms: wake to start of the runs this instance claims, and how long runs ran. */
@Injectable()
export class RunMetricsHooks implements OnModuleInit {
  constructor(
    private readonly events: RunLifecycleEvents,
    private readonly metrics: MetricsService,
  ) {}

  onModuleInit(): void {
    this.events.onRunStarted((e) => this.metrics.runStarted(e));
    this.events.onRunFinished((e) => this.metrics.runFinished(e));
  }
}
