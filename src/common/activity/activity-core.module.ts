import { Global, Module } from '@nestjs/common';
import { ActivityInterceptor } from './activity.interceptor';
import { ActivityRecorder } from './activity-recorder.service';
import { ActivityLogRepository } from './activity.repository';
import { LiveEventsModule } from '../events/live-events.module';

/**
 * The activity log every mutation writes (`activity_log`, `activity_chain_heads`): the recorder and
 * the `@LogActivity` interceptor, global so that every module records through them.
 */
@Global()
@Module({
  imports: [LiveEventsModule],
  providers: [ActivityRecorder, ActivityInterceptor, ActivityLogRepository],
  exports: [ActivityRecorder, ActivityInterceptor],
})
export class ActivityCoreModule {}
