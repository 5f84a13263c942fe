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
  @ValidateIf(present) @IsObject() @ValidateNested() @Type(() => GeneralSettingsDto) general?: GeneralSettingsDto;
  @ApiPropertyOptional({ type: ExperimentalSettingsDto })
  @ValidateIf(present) @IsObject() @ValidateNested() @Type(() => ExperimentalSettingsDto) experimental?: ExperimentalSettingsDto;
}

export type GeneralSettings = Required<GeneralSettingsDto>;
export type ExperimentalSettings = Required<ExperimentalSettingsDto>;

export const GENERAL_DEFAULTS: GeneralSettings = { instanceName: 'Agent Orchestration Service', allowSignUp: true, sessionTtlHours: 720 };
export const EXPERIMENTAL_DEFAULTS: ExperimentalSettings = { builtInAgents: false };
