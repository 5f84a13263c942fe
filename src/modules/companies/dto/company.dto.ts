import { OmittableNotNull } from '../../../common/http/optional';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { RefersTo } from '../../../common/references/refers-to.decorator';

const MAX_CENTS = 2_147_483_647;
const HEX_COLOR = /^#[0-9a-fA-F]{6}$/;

export class CreateCompanyDto {
  @IsString() @IsNotEmpty() @MaxLength(200) name: string;
  @IsOptional() @ValidateIf((_, v) => v !== null) @IsString() @MaxLength(10_000) description?: string | null;
  /** > 0 creates a UTC calendar-month budget policy */
  @IsOptional() @IsInt() @Min(0) @Max(MAX_CENTS) budgetMonthlyCents?: number;
  @IsOptional() @IsBoolean() requireBoardApprovalForNewAgents?: boolean;
  @ApiPropertyOptional({ example: '#1f6feb' })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @Matches(HEX_COLOR, { message: 'brandColor must be a hex color #rrggbb' })
  brandColor?: string | null;
}

export class BrandingDto {
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(200) name?: string;
  @IsOptional() @ValidateIf((_, v) => v !== null) @IsString() @MaxLength(10_000) description?: string | null;
  @ApiPropertyOptional({ example: '#1f6feb', nullable: true })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @Matches(HEX_COLOR, { message: 'brandColor must be a hex color #rrggbb' })
  brandColor?: string | null;
  /** an asset of the same company (422 otherwise); null clears the logo */
  @ApiPropertyOptional({ nullable: true, format: 'uuid', type: String })
  @RefersTo('asset')
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsUUID()
  logoAssetId?: string | null;
}

export class UpdateCompanyDto extends BrandingDto {
  @IsOptional() @IsInt() @Min(0) @Max(MAX_CENTS) budgetMonthlyCents?: number;
  /** `archived` archives the company (agents paused); `paused` pauses it */
  @IsOptional() @IsIn(['active', 'paused', 'archived']) status?: 'active' | 'paused' | 'archived';
  @IsOptional() @IsBoolean() requireBoardApprovalForNewAgents?: boolean;
  /**
   * Feedback-sharing consent (board only): true records the consent (`feedbackSharingConsentedAt`,
   * `feedbackSharingConsentedByUserId`); votes recorded from then on are `shared` feedback traces.
   * false withdraws it: every trace is `local` again.
   */
  @OmittableNotNull() @IsBoolean() feedbackSharingEnabled?: boolean;
}

export class ListCompaniesQueryDto {
  /** include archived companies (left out by default) */
  @IsOptional() @IsIn(['true', 'false']) includeArchived?: string;
}

export class CompanyResponseDto {
  id: string;
  name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ enum: ['active', 'paused', 'archived'] }) status: string;
  @ApiProperty({ nullable: true, type: String, description: 'why the company is paused (`manual`, `budget`)' }) pauseReason: string | null;
  issuePrefix: string;
  issueCounter: number;
  budgetMonthlyCents: number;
  spentMonthlyCents: number;
  requireBoardApprovalForNewAgents: boolean;
  @ApiProperty({ nullable: true, type: String }) brandColor: string | null;
  @ApiProperty({ nullable: true, type: String }) logoAssetId: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'derived from logoAssetId; read-only' }) logoUrl: string | null;
  /** feedback-sharing consent (present once set through PATCH): whether feedback traces may be shared */
  @ApiPropertyOptional({ type: Boolean }) feedbackSharingEnabled?: boolean;
  /** when the consent in force was given (null after a withdrawal) */
  @ApiPropertyOptional({ type: String, nullable: true }) feedbackSharingConsentedAt?: string | null;
  /** the board user who gave it */
  @ApiPropertyOptional({ type: String, nullable: true }) feedbackSharingConsentedByUserId?: string | null;
  createdAt: string;
  updatedAt: string;
}

export class CompanyStatsDto {
  agentCount: number;
  issueCount: number;
}

export class AssetResponseDto {
  assetId: string;
  companyId: string;
  contentType: string;
  byteSize: number;
  sha256: string;
  @ApiProperty({ nullable: true, type: String }) originalFilename: string | null;
  @ApiProperty({ example: '/api/assets/<asset_id>/content' }) contentPath: string;
  createdAt: string;
}
