import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { LoggerModule } from 'nestjs-pino';
import type pino from 'pino';
import { DataSource } from 'typeorm';
import { ActivityCoreModule } from './common/activity/activity-core.module';
import { ActivityInterceptor } from './common/activity/activity.interceptor';
import { CompanyReferencesInterceptor } from './common/references/company-references.interceptor';
import { CompanyReferencesModule } from './common/references/company-references.module';
import { AuthGuard } from './common/auth/auth.guard';
import { AuthModule } from './common/auth/auth.module';
import { HttpExceptionFilter } from './common/errors/http-exception.filter';
import { EventsModule } from './common/events/events.module';
import { LiveEventsModule } from './common/events/live-events.module';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { loggerOptions } from './logger';
import { AccessModule } from './modules/access/access.module';
import { ActivityModule } from './modules/activity/activity.module';
import { AdaptersModule } from './modules/adapters/adapters.module';
import { AgentsModule } from './modules/agents/agents.module';
import { AiConnectionsModule } from './modules/ai-connections/ai-connections.module';
import { AnnouncementsModule } from './modules/announcements/announcements.module';
import { EnvironmentsModule } from './modules/environments/environments.module';
import { ApprovalsModule } from './modules/approvals/approvals.module';
import { AuthorizationModule } from './modules/authorization/authorization.module';
import { BudgetsModule } from './modules/budgets/budgets.module';
import { CompaniesModule } from './modules/companies/companies.module';
import { GoalsModule } from './modules/goals/goals.module';
import { CostsModule } from './modules/costs/costs.module';
import { DashboardModule } from './modules/dashboard/dashboard.module';
import { BoardModule } from './modules/board/board.module';
import { HeartbeatModule } from './modules/heartbeat/heartbeat.module';
import { FeedbackModule } from './modules/feedback/feedback.module';
import { MetricsModule } from './modules/metrics/metrics.module';
import { PluginsModule } from './modules/plugins/plugins.module';
import { PreferencesModule } from './modules/preferences/preferences.module';
import { ProjectsModule } from './modules/projects/projects.module';
import { InstanceModule } from './modules/instance/instance.module';
import { IssuesModule } from './modules/issues/issues.module';
import { DocumentsModule } from './modules/documents/documents.module';
import { AttachmentsModule } from './modules/attachments/attachments.module';
import { ArtifactsModule } from './modules/artifacts/artifacts.module';
import { StorageModule } from './modules/storage/storage.module';
import { BuiltInAgentsModule } from './modules/built-in-agents/built-in-agents.module';
import { RoutinesModule } from './modules/routines/routines.module';
import { FoldersModule } from './modules/folders/folders.module';
import { SecretsModule } from './modules/secrets/secrets.module';
import { SkillsModule } from './modules/skills/skills.module';
import { LlmsModule } from './modules/llms/llms.module';
import { PortabilityModule } from './modules/portability/portability.module';
import { SystemModule } from './modules/system/system.module';
import { UsersModule } from './modules/users/users.module';
import { ToolsModule } from './modules/tools/tools.module';
import { McpModule } from './modules/mcp/mcp.module';

/** Domain modules, one per area of the spec. */
const DOMAIN_MODULES = [
  SystemModule,
  AuthorizationModule,
  CompaniesModule,
  ActivityModule,
  StorageModule,
  BudgetsModule,
  CostsModule,
  HeartbeatModule,
  SecretsModule,
  GoalsModule,
  ProjectsModule,
  PreferencesModule,
  AdaptersModule,
  ApprovalsModule,
  AgentsModule,
  AiConnectionsModule,
  AccessModule,
  InstanceModule,
  UsersModule,
  IssuesModule,
  DocumentsModule,
  AttachmentsModule,
  ArtifactsModule,
  PluginsModule,
  RoutinesModule,
  FoldersModule,
  BuiltInAgentsModule,
  SkillsModule,
  LlmsModule,
  PortabilityModule,
  DashboardModule,
  BoardModule,
  AnnouncementsModule,
  EnvironmentsModule,
  MetricsModule,
  FeedbackModule,
  ToolsModule,
  McpModule,
];

/**
 * The application: the foundation (config, database, logger, scheduler, the auth guard, activity,
 * reference checks, live events) and one domain module per area of the spec (DOMAIN_MODULES).
 */
@Module({})
export class AppModule {
  static register(config: AppConfig, dataSource: DataSource, options: { scheduler: boolean; logger: pino.Logger }): DynamicModule {
    return {
      module: AppModule,
      imports: [
        LoggerModule.forRoot(loggerOptions(options.logger)),
        ConfigModule.forConfig(config),
        DatabaseModule.forDataSource(dataSource),
        ...(options.scheduler ? [ScheduleModule.forRoot()] : []),
        AuthModule,
        ActivityCoreModule,
        CompanyReferencesModule,
        EventsModule,
        LiveEventsModule,
        ...DOMAIN_MODULES,
      ],
      providers: [
        { provide: APP_GUARD, useExisting: AuthGuard },
        { provide: APP_INTERCEPTOR, useExisting: ActivityInterceptor },
        { provide: APP_INTERCEPTOR, useExisting: CompanyReferencesInterceptor },
        { provide: APP_FILTER, useClass: HttpExceptionFilter },
      ],
    };
  }
}
