import { Module } from '@nestjs/common';
import { LlmsController } from './llms.controller';
import { LlmsService } from './llms.service';
import { HeartbeatModule } from '../heartbeat/heartbeat.module';

/** GET /api/llms/*: prompt documents generated from the adapter registry (global AdaptersModule, HeartbeatModule). */
@Module({
  imports: [HeartbeatModule],
  controllers: [LlmsController],
  providers: [LlmsService],
})
export class LlmsModule {}
