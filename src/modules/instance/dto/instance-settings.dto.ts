import { IsBoolean, IsInt, IsNotEmpty, IsString, Max, MaxLength, Min, ValidateIf } from 'class-validator';

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

export type GeneralSettings = Required<GeneralSettingsDto>;
export type ExperimentalSettings = Required<ExperimentalSettingsDto>;

export const GENERAL_DEFAULTS: GeneralSettings = { instanceName: 'Agent Orchestration Service', allowSignUp: true, sessionTtlHours: 720 };
export const EXPERIMENTAL_DEFAULTS: ExperimentalSettings = { builtInAgents: false };
