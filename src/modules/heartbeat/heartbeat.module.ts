import { Global, Module } from '@nestjs/common';
import { WakeupQueue } from './wakeup-queue.service';

@Global()
@Module({
  providers: [WakeupQueue],
  exports: [WakeupQueue],
})
export class HeartbeatModule {}
