import { Global, Module } from '@nestjs/common';
import { ActivityInterceptor } from './activity.interceptor';
import { ActivityRecorder } from './activity-recorder.service';
import { ActivityLogRepository } from './activity.repository';
import { LiveEventsModule } from '../events/live-events.module';

@Global()
@Module({
  imports: [LiveEventsModule],
  providers: [ActivityRecorder, ActivityInterceptor, ActivityLogRepository],
  exports: [ActivityRecorder, ActivityInterceptor],
})
export class ActivityCoreModule {}
