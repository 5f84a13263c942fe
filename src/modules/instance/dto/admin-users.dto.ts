import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, IsUUID, MaxLength, ValidateNested } from 'class-validator';
import { MEMBERSHIP_ROLES, MembershipRole } from '../../access/permission-keys';

export class AdminUsersQueryDto {
  /** text search in email, name and slug */
  @IsOptional() @IsString() @MaxLength(200) query?: string;
}

export class CompanyAccessEntryDto {
  @IsUUID() companyId: string;
  /** role for a new membership (default member) or the new role of an existing one */
  @ApiProperty({ enum: MEMBERSHIP_ROLES, required: false })
  @IsOptional()
  @IsIn(MEMBERSHIP_ROLES)
  membershipRole?: MembershipRole;
}

export class PutCompanyAccessDto {
  /** the companies the user may reach; every other membership becomes inactive */
  @IsArray() @ArrayMaxSize(1000) @ValidateNested({ each: true }) @Type(() => CompanyAccessEntryDto) companies: CompanyAccessEntryDto[];
}

export class CompanyAccessItemDto {
  companyId: string;
  companyName: string;
  membershipId: string;
  @ApiProperty({ enum: MEMBERSHIP_ROLES }) membershipRole: string;
  @ApiProperty({ enum: ['active', 'inactive'] }) status: string;
}

export class CompanyAccessResponseDto {
  userId: string;
  isInstanceAdmin: boolean;
  companies: CompanyAccessItemDto[];
}
