import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsInt, IsNotEmpty, IsObject, IsString, Max, MaxLength, Min, ValidateIf, ValidateNested } from 'class-validator';

const present = (_: unknown, v: unknown) => v !== undefined;

/** Instance-wide settings; every field optional in a PATCH, none may be null. */
export class GeneralSettingsDto {
  /** shown in the UI and in onboarding material */
  @ValidateIf(present) @IsString() @IsNotEmpty() @MaxLength(100) instanceName?: string;
  /** authenticated mode: whether anyone may sign up (the first user always may) */
  @ValidateIf(present) @IsBoolean() allowSignUp?: boolean;
  /** lifetime of a new sign-in session, in hours (1 to 8760) */
  @ValidateIf(present) @IsInt() @Min(1) @Max(8760) sessionTtlHours?: number;
  /** scheduled database backups on or off (POST /api/instance/database-backups works either way) */
  @ValidateIf(present) @IsBoolean() databaseBackupEnabled?: boolean;
  /** minutes between scheduled backups (1 to 44640) */
  @ValidateIf(present) @IsInt() @Min(1) @Max(44640) databaseBackupIntervalMinutes?: number;
  /** scheduled backups kept: the newest of each of the last N days (0 to 366) */
  @ValidateIf(present) @IsInt() @Min(0) @Max(366) databaseBackupRetentionDaily?: number;
  /** ... of each of the last N ISO weeks (0 to 520) */
  @ValidateIf(present) @IsInt() @Min(0) @Max(520) databaseBackupRetentionWeekly?: number;
  /** ... of each of the last N calendar months, UTC (0 to 240) */
  @ValidateIf(present) @IsInt() @Min(0) @Max(240) databaseBackupRetentionMonthly?: number;
}

/** Feature flags. */
export class ExperimentalSettingsDto {
  /** the built-in agents feature (registry, provisioning); off by default */
  @ValidateIf(present) @IsBoolean() builtInAgents?: boolean;
  // The board UI's switches (docs/api/board-views.md says which ones this service honours); each a boolean.
  /** the board UI: execution environments besides the host (this service has only the host) */
  @ValidateIf(present) @IsBoolean() enableEnvironments?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableNativeRunner?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableManagedSandboxOnly?: boolean;
  /** the board UI only: this service has no isolated execution workspaces */
  @ValidateIf(present) @IsBoolean() enableIsolatedWorkspaces?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableIsolatedWorkspacesByDefault?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableStreamlinedLeftNavigation?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableStreamlinedUi?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableApps?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableChatConnectors?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enablePipelines?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableCases?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableAgentChat?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableConferenceRoomChat?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableClassicTaskInterface?: boolean;
  /** honoured: off refuses POST /api/issues/{id}/plan/accept (409 plan_decompositions_disabled) */
  @ValidateIf(present) @IsBoolean() enableIssuePlanDecompositions?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableExperimentalFileViewer?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableExternalObjects?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableSmokeLab?: boolean;
  /** honoured: the same flag as `builtInAgents` (reading gives its value, writing sets it) */
  @ValidateIf(present) @IsBoolean() enableBuiltInAgents?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableBetaSkills?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableSummaries?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableStatusCards?: boolean;
  /** the board UI's decisions page (GET …/attention answers either way) */
  @ValidateIf(present) @IsBoolean() enableDecisions?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableGoalsSidebarLink?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableServerInfoDebugView?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enablePaperclipDeveloperMode?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableSimplifiedEnglishInteractions?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableFirstTaskPlanProposal?: boolean;
  /** not honoured: workspace runtime services are started and stopped only on request */
  @ValidateIf(present) @IsBoolean() autoRestartDevServerWhenIdle?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableWorkspaceBranchReconcileForward?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableWorkspaceDirtyQuarantineRepair?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableOwnerInstanceAdmin?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableSandboxDuplexBridge?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableRunnerPreviewIngress?: boolean;
  /** the board UI only */
  @ValidateIf(present) @IsBoolean() enableWorktreeRunExecution?: boolean;
}

/** Both blocks in one object (`GET /api/instance/settings`). */
export class InstanceSettingsDto {
  @ApiProperty({ type: GeneralSettingsDto }) general: GeneralSettingsDto;
  @ApiProperty({ type: ExperimentalSettingsDto }) experimental: ExperimentalSettingsDto;
}

/** Partial update of either block or both; unknown blocks or fields and nulls are rejected (400). */
export class PatchInstanceSettingsDto {
  @ApiPropertyOptional({ type: GeneralSettingsDto })
  @ValidateIf(present)
  @IsObject()
  @ValidateNested()
  @Type(() => GeneralSettingsDto)
  general?: GeneralSettingsDto;
  @ApiPropertyOptional({ type: ExperimentalSettingsDto })
  @ValidateIf(present)
  @IsObject()
  @ValidateNested()
  @Type(() => ExperimentalSettingsDto)
  experimental?: ExperimentalSettingsDto;
}

export type GeneralSettings = Required<GeneralSettingsDto>;
export type ExperimentalSettings = Required<ExperimentalSettingsDto>;

export const GENERAL_DEFAULTS: GeneralSettings = {
  instanceName: 'Agent Orchestration Service',
  allowSignUp: true,
  sessionTtlHours: 720,
  databaseBackupEnabled: false,
  databaseBackupIntervalMinutes: 1440,
  databaseBackupRetentionDaily: 7,
  databaseBackupRetentionWeekly: 4,
  databaseBackupRetentionMonthly: 6,
};
/** Defaults: the board UI's for its own switches; on for the features this service has (plan decompositions). */
export const EXPERIMENTAL_DEFAULTS: ExperimentalSettings = {
  builtInAgents: false,
  enableBuiltInAgents: false,
  enableEnvironments: false,
  enableNativeRunner: true,
  enableManagedSandboxOnly: false,
  enableIsolatedWorkspaces: false,
  enableIsolatedWorkspacesByDefault: false,
  enableStreamlinedLeftNavigation: true,
  enableStreamlinedUi: true,
  enableApps: true,
  enableChatConnectors: false,
  enablePipelines: false,
  enableCases: false,
  enableAgentChat: false,
  enableConferenceRoomChat: false,
  enableClassicTaskInterface: false,
  enableIssuePlanDecompositions: true,
  enableExperimentalFileViewer: false,
  enableExternalObjects: false,
  enableSmokeLab: false,
  enableBetaSkills: false,
  enableSummaries: false,
  enableStatusCards: false,
  enableDecisions: false,
  enableGoalsSidebarLink: false,
  enableServerInfoDebugView: false,
  enablePaperclipDeveloperMode: false,
  enableSimplifiedEnglishInteractions: false,
  enableFirstTaskPlanProposal: false,
  autoRestartDevServerWhenIdle: false,
  enableWorkspaceBranchReconcileForward: true,
  enableWorkspaceDirtyQuarantineRepair: true,
  enableOwnerInstanceAdmin: false,
  enableSandboxDuplexBridge: false,
  enableRunnerPreviewIngress: false,
  enableWorktreeRunExecution: false,
};

/** Experimental settings that are another name of a stored one: read from it, written to it. */
export const EXPERIMENTAL_ALIASES: Partial<Record<keyof ExperimentalSettings, keyof ExperimentalSettings>> = {
  enableBuiltInAgents: 'builtInAgents',
};
