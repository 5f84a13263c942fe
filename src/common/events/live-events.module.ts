import { Module } from '@nestjs/common';
import { HiddenIssues } from './hidden-issues.port';
import { LiveEventBus } from './live-event-bus';
import { LiveEventHub } from './live-event-hub';
import { LiveEventStreams } from './live-event-streams';
import { LiveEventsController } from './live-events.controller';
import { LiveEventsJobs } from './live-events.jobs';
import { LiveEventsRepository } from './live-events.repository';
import { LiveEventsListenerFactory } from './live-events-listener';

/** The live event bus: publish through PostgreSQL, deliver to WebSocket and SSE clients of every instance. */
@Module({
  controllers: [LiveEventsController],
  providers: [LiveEventsRepository, LiveEventsListenerFactory, LiveEventBus, LiveEventHub, LiveEventStreams, LiveEventsJobs, HiddenIssues],
  exports: [LiveEventBus, LiveEventHub, HiddenIssues],
})
export class LiveEventsModule {}
