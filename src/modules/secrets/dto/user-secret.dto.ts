import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString, IsUUID, Matches, MaxLength, ValidateIf } from 'class-validator';
import { OmittableNotNull } from '../../../common/http/optional';

const nullable = () => ValidateIf((_: unknown, v: unknown) => v !== null);

export class CreateUserSecretDefinitionDto {
  /** unique in the company; letters, digits, `_`, `-` and `.` */
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  @Matches(/^[A-Za-z0-9_.-]+$/, { message: 'key may hold letters, digits, _, - and .' })
  key: string;
  @IsString() @IsNotEmpty() @MaxLength(200) name: string;
  @IsOptional() @nullable() @IsString() @MaxLength(10_000) description?: string | null;
  /** how agents should use it */
  @IsOptional() @nullable() @IsString() @MaxLength(10_000) usageGuidance?: string | null;
  @ApiPropertyOptional({ enum: ['active', 'archived'] }) @IsOptional() @IsIn(['active', 'archived']) status?: 'active' | 'archived';
}

export class UpdateUserSecretDefinitionDto {
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(200) name?: string;
  @IsOptional() @nullable() @IsString() @MaxLength(10_000) description?: string | null;
  @IsOptional() @nullable() @IsString() @MaxLength(10_000) usageGuidance?: string | null;
  @ApiPropertyOptional({ enum: ['active', 'archived'] }) @OmittableNotNull() @IsIn(['active', 'archived']) status?: 'active' | 'archived';
}

/** A secret each board user provides for themselves. */
export class UserSecretDefinitionDto {
  id: string;
  companyId: string;
  key: string;
  name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ nullable: true, type: String }) usageGuidance: string | null;
  @ApiProperty({ enum: ['active', 'archived'] }) status: string;
  /** always local_encrypted: user values are encrypted with the instance master key */
  provider: string;
  @ApiProperty({ enum: ['service_managed'] }) managedMode: 'service_managed';
  @ApiProperty({ nullable: true, type: String }) createdByUserId: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByAgentId: string | null;
  createdAt: string;
  updatedAt: string;
}

export class UserSecretCoverageDto {
  definitionId: string;
  /** active members of the company with a value */
  configuredCount: number;
  /** values of users who are no longer active members */
  inactiveCount: number;
  /** active human members without a value */
  missingCount: number;
}

export class CreateMyUserSecretDto {
  @IsUUID() definitionId: string;
  /** accepted for the board UI; must match the definition's key when given */
  @IsOptional() @IsString() @MaxLength(200) definitionKey?: string;
  @ApiProperty({ writeOnly: true }) @IsString() @IsNotEmpty() @MaxLength(65_536) value: string;
}

export class RotateMyUserSecretDto {
  @ApiProperty({ writeOnly: true }) @IsString() @IsNotEmpty() @MaxLength(65_536) value: string;
}

/** The caller's own value of a definition: metadata only, never the value. */
export class MyUserSecretDto {
  id: string;
  companyId: string;
  @ApiProperty({ enum: ['user'] }) scope: 'user';
  ownerUserId: string;
  userSecretDefinitionId: string;
  /** the definition's key */
  key: string;
  name: string;
  provider: string;
  @ApiProperty({ enum: ['active'] }) status: 'active';
  /** 1, then +1 per rotation */
  latestVersion: number;
  lastRotatedAt: string;
  createdAt: string;
  updatedAt: string;
}

export class MyUserSecretEntryDto {
  definition: UserSecretDefinitionDto;
  secret: MyUserSecretDto;
}
