import { OmittableNotNull } from '../../../common/http/optional';
import { ApiProperty } from '@nestjs/swagger';
import { IsEmail, IsInt, IsNotEmpty, IsOptional, IsString, IsUrl, Max, MaxLength, Min, MinLength, ValidateIf } from 'class-validator';
import { UserResponseDto } from '../../instance/user.types';

export class SignUpDto {
  @IsEmail() @MaxLength(254) email: string;
  /** 8 to 256 characters */
  @IsString() @MinLength(8) @MaxLength(256) password: string;
  /** display name; defaults to the part of the email before @ */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(100) name?: string;
}

export class SignInDto {
  @IsString() @IsNotEmpty() @MaxLength(254) email: string;
  @IsString() @IsNotEmpty() @MaxLength(256) password: string;
}

export class UpdateProfileDto {
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(100) name?: string;
  /** avatar URL; null clears it */
  @ApiProperty({ nullable: true, type: String, required: false })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsUrl({ require_tld: false, protocols: ['http', 'https'] })
  @MaxLength(2000)
  image?: string | null;
  @ApiProperty({ nullable: true, type: String, required: false })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @MaxLength(2000)
  bio?: string | null;
}

export class SessionDto {
  id: string;
  userId: string;
  expiresAt: string;
  createdAt: string;
}

export class SignedInDto {
  user: UserResponseDto;
  session: SessionDto;
  /** the session token, also set as the `svc_session` cookie; use as `Authorization: Bearer` */
  token: string;
}

export class GetSessionDto {
  @ApiProperty({ nullable: true, type: SessionDto }) session: SessionDto | null;
  @ApiProperty({ nullable: true, type: UserResponseDto }) user: UserResponseDto | null;
  @ApiProperty({ nullable: true, enum: ['session', 'board_token', 'local_implicit'] }) credential: string | null;
}

export class CreateBoardTokenDto {
  @IsString() @IsNotEmpty() @MaxLength(100) name: string;
  /** days until it expires (1 to 3650); omitted: no expiry */
  @IsOptional() @IsInt() @Min(1) @Max(3650) expiresInDays?: number;
}

export class BoardTokenResponseDto {
  id: string;
  name: string;
  tokenPrefix: string;
  @ApiProperty({ nullable: true, type: String }) expiresAt: string | null;
  @ApiProperty({ nullable: true, type: String }) revokedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) lastUsedAt: string | null;
  createdAt: string;
}

export class CreatedBoardTokenDto extends BoardTokenResponseDto {
  /** shown once */
  token: string;
}

export class CompanyUserProfileDto {
  id: string;
  name: string;
  slug: string;
  @ApiProperty({ nullable: true, type: String }) image: string | null;
  @ApiProperty({ nullable: true, type: String }) bio: string | null;
  membershipRole: string;
  membershipStatus: string;
}

export class BoardClaimStatusDto {
  @ApiProperty({ enum: ['pending', 'claimed', 'expired'] }) status: string;
  expiresAt: string;
  @ApiProperty({ nullable: true, type: String }) claimedAt: string | null;
  /** the claim needs a signed-in (session) user */
  signedIn: boolean;
}
