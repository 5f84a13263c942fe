import { LiveEventHub } from '../../common/events/live-event-hub';
import { LiveEventsModule } from '../../common/events/live-events.module';
import { IssueReadContributions } from './issue-read-contributions';
import { Module, OnModuleInit } from '@nestjs/common';
import { RunLifecycleEvents } from '../heartbeat/run-lifecycle-events';
import { ActivityModule } from '../activity/activity.module';
import { AgentsModule } from '../agents/agents.module';
import { WakeupQueue } from '../heartbeat/wakeup-queue.service';
import { IssueControlsController } from './issue-controls.controller';
import { IssueInteractionsRepository } from './issue-interactions.repository';
import { IssueInteractions } from './issue-interactions.service';
import { IssueTreeHoldsRepository } from './issue-tree-holds.repository';
import { IssueTreeHolds } from './issue-tree-holds.service';
import { RunnerGoalService } from './runner-goal.service';
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
import { IssueCommentsRepository } from './issue-comments.repository';
import { IssueListRepository } from './issue-list.repository';
import { IssueRelationsRepository } from './issue-relations.repository';
import { IssuesRepository } from './issues.repository';
import { IssueAgents } from './issue-agents';
import { IssueContextRepository } from './issue-context.repository';
import { IssueRunsRepository } from './issue-runs.repository';
import { CompaniesModule } from '../companies/companies.module';
import { LabelsRepository } from './labels.repository';
import { IssuesService } from './issues.service';
import { LabelsController } from './labels.controller';
import { LabelsService } from './labels.service';
import { AuthorizationModule } from '../authorization/authorization.module';
import { HeartbeatModule } from '../heartbeat/heartbeat.module';
import { recordCompanies } from '../../common/references/record-company.repository';
import { RunWakeDetails } from '../heartbeat/run-wake-details.port';
import { IssueWakeDetails } from './issue-wake-details';
import { ProjectsModule } from '../projects/projects.module';
import { ProjectTaskCounts } from '../projects/project-task-counts.port';

@Module({
  imports: [HeartbeatModule, AuthorizationModule, ActivityModule, LiveEventsModule, AgentsModule, CompaniesModule, ProjectsModule],
  controllers: [IssuesController, IssueCommentsController, IssueInboxController, LabelsController, IssueControlsController],
  providers: [
    recordCompanies('issues'),
    IssuesRepository,
    IssueContextRepository,
    IssueRunsRepository,
    IssueAgents,
    IssueCommentsRepository,
    IssueListRepository,
    IssueRelationsRepository,
    LabelsRepository,
    IssueStore,
    IssuesService,
    IssueListService,
    IssueDetailService,
    IssueRelations,
    IssueCheckout,
    IssueComments,
    IssueWakeups,
    IssueRunsService,
    IssueInboxService,
    LabelsService,
    ExecutionWorkspaceGate,
    IssueTreeHoldsRepository,
    IssueTreeHolds,
    IssueInteractionsRepository,
    IssueInteractions,
    RunnerGoalService,
    IssueReadContributions,
    IssueWakeDetails,
  ],
  exports: [
    IssueStore,
    IssuesService,
    IssueComments,
    IssueWakeups,
    ExecutionWorkspaceGate,
    LabelsService,
    IssueTreeHolds,
    IssueReadContributions,
  ],
})
export class IssuesModule implements OnModuleInit {
  constructor(
    private readonly runEvents: RunLifecycleEvents,
    private readonly checkouts: IssueCheckout,
    private readonly hub: LiveEventHub,
    private readonly store: IssueStore,
    private readonly queue: WakeupQueue,
    private readonly holds: IssueTreeHolds,
    private readonly wakeDetails: RunWakeDetails,
    private readonly issueWakeDetails: IssueWakeDetails,
    private readonly taskCounts: ProjectTaskCounts,
    private readonly lists: IssueListRepository,
  ) {}

  /** Runs that end without succeeding (including runs reaped after their instance died) release their checkouts. */
  onModuleInit(): void {
    // live events about hidden issues stay out of the stream, as out of the activity feed
    this.hub.setHiddenIssueCheck((companyId, ids) => this.store.hiddenAmong(companyId, ids));
    // wakes for issues of a paused subtree wait until the hold is released
    this.queue.registerIssueHoldProbe(this.holds.probe);
    // a run's prompt quotes the issue and the comments that woke its agent
    this.wakeDetails.register((companyId, q) => this.issueWakeDetails.read(companyId, q));
    // the projects' taskCount
    this.taskCounts.register((companyId, ids) => this.lists.countByProject(companyId, ids));
    this.runEvents.onRunFinished((e) =>
      e.status === 'succeeded' ? undefined : this.checkouts.releaseRunCheckouts(e.companyId, e.runId, e.errorCode ?? e.status),
    );
  }
}
