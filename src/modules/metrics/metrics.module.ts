import { Module } from '@nestjs/common';
import { HeartbeatModule } from '../heartbeat/heartbeat.module';
import { MetricsController } from './metrics.controller';
import { MetricsRepository } from './metrics.repository';
import { MetricsService } from './metrics.service';
import { RunMetricsHooks } from './run-lifecycle-events.port-impl';

/** Operators' metrics (Prometheus) and the liveness/readiness probes. */
@Module({
  imports: [HeartbeatModule],
  controllers: [MetricsController],
  providers: [MetricsRepository, MetricsService, RunMetricsHooks],
  exports: [MetricsService],
})
export class MetricsModule {}
