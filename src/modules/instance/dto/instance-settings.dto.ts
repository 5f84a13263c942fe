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
export const EXPERIMENTAL_DEFAULTS: ExperimentalSettings = { builtInAgents: false };
