import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsString, Matches, MaxLength, ValidateIf } from 'class-validator';

const HEX_COLOR = /^#[0-9a-fA-F]{6}$/;

export class CreateLabelDto {
  /** unique in the company, case-insensitively */
  @IsString() @IsNotEmpty() @MaxLength(100) name: string;
  @ApiPropertyOptional({ nullable: true, example: '#1f6feb', type: String })
  @ValidateIf((_, v) => v !== undefined && v !== null)
  @Matches(HEX_COLOR, { message: 'color must be a hex color #rrggbb' })
  color?: string | null;
}

export class UpdateLabelDto {
  @ValidateIf((_, v) => v !== undefined) @IsString() @IsNotEmpty() @MaxLength(100) name?: string;
  @ApiPropertyOptional({ nullable: true, example: '#1f6feb', type: String })
  @ValidateIf((_, v) => v !== undefined && v !== null)
  @Matches(HEX_COLOR, { message: 'color must be a hex color #rrggbb' })
  color?: string | null;
}

export class LabelResponseDto {
  id: string;
  companyId: string;
  name: string;
  @ApiProperty({ nullable: true, type: String }) color: string | null;
  createdAt: string;
  updatedAt: string;
}
