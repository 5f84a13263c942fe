import { LiveEventHub } from '../../common/events/live-event-hub';
import { LiveEventsModule } from '../../common/events/live-events.module';
import { Module, OnModuleInit } from '@nestjs/common';
import { RunLifecycleEvents } from '../heartbeat/run-lifecycle-events';
import { ActivityModule } from '../activity/activity.module';
import { ExecutionWorkspaceGate } from './execution-workspace.gate';
import { IssueCheckout } from './issue-checkout.service';
import { IssueCommentsController } from './issue-comments.controller';
import { IssueComments } from './issue-comments.service';
import { IssueDetailService } from './issue-detail.service';
import { IssueInboxController } from './issue-inbox.controller';
import { IssueInboxService } from './issue-inbox.service';
import { IssueListService } from './issue-list.service';
import { IssueRelations } from './issue-relations.service';
import { IssueRunsService } from './issue-runs.service';
import { IssueStore } from './issue-store.service';
import { IssueWakeups } from './issue-wakeups.service';
import { IssuesController } from './issues.controller';
import { IssuesService } from './issues.service';
import { LabelsController } from './labels.controller';
import { LabelsService } from './labels.service';

@Module({
  imports: [ActivityModule, LiveEventsModule],
  controllers: [IssuesController, IssueCommentsController, IssueInboxController, LabelsController],
  providers: [
    IssueStore, IssuesService, IssueListService, IssueDetailService, IssueRelations, IssueCheckout, IssueComments,
    IssueWakeups, IssueRunsService, IssueInboxService, LabelsService, ExecutionWorkspaceGate,
  ],
  exports: [IssueStore, IssuesService, IssueComments, IssueWakeups, ExecutionWorkspaceGate, LabelsService],
})
export class IssuesModule implements OnModuleInit {
  constructor(
    private readonly runEvents: RunLifecycleEvents,
    private readonly checkouts: IssueCheckout,
    private readonly hub: LiveEventHub,
    private readonly store: IssueStore,
  ) {}

  /** Runs that end without succeeding (including runs reaped after their instance died) release their checkouts. */
  onModuleInit(): void {
    // live events about hidden issues stay out of the stream, as out of the activity feed
    this.hub.setHiddenIssueCheck((companyId, ids) => this.store.hiddenAmong(companyId, ids));
    this.runEvents.onRunFinished((e) =>
      e.status === 'succeeded' ? undefined : this.checkouts.releaseRunCheckouts(e.companyId, e.runId, e.errorCode ?? e.status),
    );
  }
}
