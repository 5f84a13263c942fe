import { Module } from '@nestjs/common';
import { LlmsController } from './llms.controller';
import { LlmsService } from './llms.service';
import { AdaptersModule } from '../adapters/adapters.module';

/** GET /api/llms/*: prompt documents generated from the adapter registry and executors (AdaptersModule). */
@Module({
  imports: [AdaptersModule],
  controllers: [LlmsController],
  providers: [LlmsService],
})
export class LlmsModule {}
