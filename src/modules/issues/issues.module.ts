import { LiveEventsModule } from '../../common/events/live-events.module';
import { IssueReadContributions } from './issue-read-contributions.port';
import { Module } from '@nestjs/common';
import { ActivityModule } from '../activity/activity.module';
import { AgentsModule } from '../agents/agents.module';
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
import { IssueWakeDetails } from './issue-wake-details';
import { ProjectsModule } from '../projects/projects.module';
import { HiddenIssuesRegistration } from './hidden-issues.port-impl';
import { IssueHoldsRegistration } from './issue-holds.port-impl';
import { ProjectTaskCountsRegistration } from './project-task-counts.port-impl';
import { RunWakeDetailsRegistration } from './run-wake-details.port-impl';
import { RunCheckoutRelease } from './run-lifecycle-events.port-impl';

/**
 * Issues and what hangs on them (`issues`, comments, relations, labels, user states, interactions,
 * tree holds): checkout, wakeups, the inbox; fills the engine's wake details, holds and run-end ports.
 */
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
    HiddenIssuesRegistration,
    IssueHoldsRegistration,
    RunWakeDetailsRegistration,
    ProjectTaskCountsRegistration,
    RunCheckoutRelease,
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
export class IssuesModule {}
