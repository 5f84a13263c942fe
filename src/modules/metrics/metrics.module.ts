import { Module } from '@nestjs/common';
import { HeartbeatModule } from '../heartbeat/heartbeat.module';
import { MetricsController } from './metrics.controller';
import { MetricsRepository } from './metrics.repository';
import { MetricsService } from './metrics.service';

/** Operators' metrics (Prometheus) and the liveness/readiness probes. */
@Module({
  imports: [HeartbeatModule],
  controllers: [MetricsController],
  providers: [MetricsRepository, MetricsService],
  exports: [MetricsService],
})
export class MetricsModule {}
