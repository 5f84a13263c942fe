import { Global, Module } from '@nestjs/common';
import { ActivityInterceptor } from './activity.interceptor';
import { ActivityRecorder } from './activity-recorder.service';

@Global()
@Module({
  providers: [ActivityRecorder, ActivityInterceptor],
  exports: [ActivityRecorder, ActivityInterceptor],
})
export class ActivityCoreModule {}
