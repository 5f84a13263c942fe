import { Module } from '@nestjs/common';
import { PreferencesModule } from '../preferences/preferences.module';
import { AttentionRepository } from './attention.repository';
import { AttentionService } from './attention.service';
import { BoardController } from './board.controller';
import { TimelineRepository } from './timeline.repository';
import { TimelineService } from './timeline.service';

/**
 * The board's company-wide read models: what needs attention and the work timeline. They read the
 * records of several domains (see FOREIGN_READS) and own no table; the attention queue's
 * dismissals are the preferences module's inbox dismissals.
 */
@Module({
  imports: [PreferencesModule],
  controllers: [BoardController],
  providers: [AttentionRepository, AttentionService, TimelineRepository, TimelineService],
})
export class BoardModule {}
