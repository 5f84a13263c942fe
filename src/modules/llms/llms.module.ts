import { Module } from '@nestjs/common';
import { LlmsController } from './llms.controller';
import { LlmsService } from './llms.service';

/** GET /api/llms/*: prompt documents generated from the adapter registry (global AdaptersModule, HeartbeatModule). */
@Module({ controllers: [LlmsController], providers: [LlmsService] })
export class LlmsModule {}
