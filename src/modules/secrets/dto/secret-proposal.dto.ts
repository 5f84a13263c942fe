import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsNotEmpty, IsObject, IsOptional, IsString, IsUUID, MaxLength, ValidateIf, ValidateNested } from 'class-validator';
import { RefersTo } from '../../../common/references/refers-to.decorator';

const nullable = () => ValidateIf((_: unknown, v: unknown) => v !== null);

export class CreateSecretProposalDto {
  /** the secret's name, as it will be created */
  @IsString() @IsNotEmpty() @MaxLength(200) name: string;
  @IsOptional() @nullable() @IsString() @MaxLength(10_000) description?: string | null;
  /** why the proposer needs it */
  @IsOptional() @nullable() @IsString() @MaxLength(10_000) reason?: string | null;
  /** the issue it is needed for (of the company) */
  @RefersTo('issue') @IsOptional() @IsUUID() issueId?: string;
  /** a value the proposer already has (e.g. a key it was given): held encrypted until decided, never shown */
  @ApiPropertyOptional({ writeOnly: true }) @IsOptional() @IsString() @IsNotEmpty() @MaxLength(65_536) value?: string;
}

export class SecretProposalListQueryDto {
  @ApiPropertyOptional({ enum: ['pending', 'approved', 'rejected', 'all'], default: 'pending' })
  @IsOptional()
  @IsIn(['pending', 'approved', 'rejected', 'all'])
  status?: 'pending' | 'approved' | 'rejected' | 'all';
}

export class ProposalOverridesDto {
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) name?: string;
  @IsOptional() @nullable() @IsString() @MaxLength(10_000) description?: string | null;
  /** accepted for the board UI: a provider id of GET …/secret-provider-configs (default: the deployment default) */
  @IsOptional() @nullable() @IsString() @MaxLength(100) providerConfigId?: string | null;
}

/** Fill in and approve: `value` unless the proposer supplied one (then `value` replaces it). */
export class ApproveSecretProposalDto {
  @ApiPropertyOptional({ writeOnly: true }) @IsOptional() @IsString() @IsNotEmpty() @MaxLength(65_536) value?: string;
  @ApiPropertyOptional({ type: ProposalOverridesDto })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ProposalOverridesDto)
  overrides?: ProposalOverridesDto;
  @IsOptional() @nullable() @IsString() @MaxLength(10_000) note?: string | null;
}

export class RejectSecretProposalDto {
  @IsOptional() @nullable() @IsString() @MaxLength(10_000) reason?: string | null;
}

export class ProposerDto {
  @ApiProperty({ enum: ['agent', 'user'] }) type: 'agent' | 'user';
  id: string;
  @ApiProperty({ nullable: true, type: String }) name: string | null;
}

/** A proposed company secret; never its value. */
export class SecretProposalDto {
  id: string;
  companyId: string;
  /** always `secret` */
  @ApiProperty({ enum: ['secret'] }) kind: 'secret';
  @ApiProperty({ enum: ['pending', 'approved', 'rejected'] }) status: string;
  proposedName: string;
  @ApiProperty({ nullable: true, type: String }) proposedDescription: string | null;
  @ApiProperty({ nullable: true, type: String }) reason: string | null;
  /** the same as `reason`, under the name the board UI reads */
  @ApiProperty({ nullable: true, type: String }) justification: string | null;
  proposedBy: ProposerDto;
  @ApiProperty({ nullable: true, type: String }) proposedByAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) runId: string | null;
  @ApiProperty({ nullable: true, type: String }) issueId: string | null;
  /** whether the proposer supplied a value (the board then need not fill one in) */
  hasValue: boolean;
  /** always null: no digest or length of a proposed value is ever shown (a hash of a short value can be guessed) */
  @ApiProperty({ nullable: true, type: String }) valueFingerprintSha256: null;
  @ApiProperty({ nullable: true, type: Number }) valueLength: null;
  /** the company secret the approval created */
  @ApiProperty({ nullable: true, type: String }) secretId: string | null;
  @ApiProperty({ nullable: true, type: String }) decidedByUserId: string | null;
  @ApiProperty({ nullable: true, type: String }) decisionNote: string | null;
  @ApiProperty({ nullable: true, type: String }) decidedAt: string | null;
  /** always null and empty: proposals are for new secrets, not bindings */
  @ApiProperty({ nullable: true, type: String }) target: null;
  @ApiProperty({ type: [String] }) envKeys: string[];
  createdAt: string;
  updatedAt: string;
}
