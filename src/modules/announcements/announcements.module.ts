import { Module } from '@nestjs/common';
import { AnnouncementsController } from './announcements.controller';

/** Instance announcements for the board UI (none are published: the current one is always null). */
@Module({ controllers: [AnnouncementsController] })
export class AnnouncementsModule {}
