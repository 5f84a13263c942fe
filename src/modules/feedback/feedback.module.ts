import { Module } from '@nestjs/common';
import { FeedbackController } from './feedback.controller';
import { FeedbackRepository } from './feedback.repository';
import { FeedbackService } from './feedback.service';

/** Feedback traces: votes of board users on agent output. */
@Module({ controllers: [FeedbackController], providers: [FeedbackRepository, FeedbackService] })
export class FeedbackModule {}
