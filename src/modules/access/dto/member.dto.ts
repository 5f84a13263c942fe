import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsArray, IsIn, IsOptional } from 'class-validator';
import { OmittableNotNull } from '../../../common/http/optional';
import { MEMBERSHIP_ROLES, MEMBERSHIP_STATUSES, MembershipRole, MembershipStatus, PERMISSION_KEYS } from '../permission-keys';

/** `{ permissionKey, scope? }`; scope: object of scope keys or shorthand `project:<id>`, `agent:<id>`, `subtree:<id>` */
export class GrantDto {
  @ApiProperty({ enum: PERMISSION_KEYS }) permissionKey: string;
  @ApiPropertyOptional({ oneOf: [{ type: 'object' }, { type: 'string' }], nullable: true }) scope?: unknown;
}

export class UpdateMemberDto {
  @ApiPropertyOptional({ enum: MEMBERSHIP_ROLES })
  @IsOptional()
  @IsIn(MEMBERSHIP_ROLES)
  membershipRole?: MembershipRole;
  @ApiPropertyOptional({ enum: MEMBERSHIP_STATUSES })
  @IsOptional()
  @IsIn(MEMBERSHIP_STATUSES)
  status?: MembershipStatus;
}

export class UpdateMemberPermissionsDto {
  /** replaces every grant of the member */
  @ApiProperty({ type: [GrantDto] })
  @IsArray()
  grants: unknown[];
}

/** Any of role, status and the grant set (replaced whole); omitted fields keep their value. */
export class RoleAndGrantsDto {
  @ApiPropertyOptional({ enum: MEMBERSHIP_ROLES })
  @OmittableNotNull()
  @IsIn(MEMBERSHIP_ROLES)
  membershipRole?: MembershipRole;
  @ApiPropertyOptional({ enum: MEMBERSHIP_STATUSES })
  @OmittableNotNull()
  @IsIn(MEMBERSHIP_STATUSES)
  status?: MembershipStatus;
  /** replaces every grant of the member (deleted and re-inserted in the same transaction) */
  @ApiPropertyOptional({ type: [GrantDto] })
  @OmittableNotNull()
  @IsArray()
  grants?: unknown[];
}

export class MemberResponseDto {
  id: string;
  companyId: string;
  @ApiProperty({ enum: ['user', 'agent'] }) principalType: string;
  principalId: string;
  @ApiProperty({ enum: MEMBERSHIP_ROLES }) membershipRole: string;
  @ApiProperty({ enum: MEMBERSHIP_STATUSES }) status: string;
  @ApiProperty({ nullable: true, type: Object }) user: {
    id: string;
    name: string;
    email: string | null;
    slug: string;
    image: string | null;
  } | null;
  @ApiProperty({ nullable: true, type: Object }) agent: { id: string; name: string; status: string } | null;
  @ApiProperty({ type: [GrantDto] }) grants: GrantDto[];
  createdAt: string;
  updatedAt: string;
}

/** What the caller may do on the members page. */
export class MembersPageAccessDto {
  /** the caller's role (`owner` for the local board and instance admins); null for agents and non-members */
  @ApiProperty({ nullable: true, type: String }) currentUserRole: string | null;
  /** holds `users:manage_permissions` */
  canManageMembers: boolean;
  /** holds `users:invite` */
  canInviteUsers: boolean;
  /** holds `joins:approve` */
  canApproveJoinRequests: boolean;
}

/** GET members as the board UI reads it (the request carries `X-Paperclip-Route`). */
export class MembersPageDto {
  @ApiProperty({ type: [MemberResponseDto] }) members: MemberResponseDto[];
  access: MembersPageAccessDto;
}

export class DirectoryUserDto {
  id: string;
  name: string;
  slug: string;
  @ApiProperty({ nullable: true, type: String }) image: string | null;
  @ApiProperty({ enum: MEMBERSHIP_ROLES }) membershipRole: string;
  @ApiProperty({ enum: MEMBERSHIP_STATUSES }) status: string;
}

export class DirectoryEntryUserDto {
  id: string;
  name: string;
  /** never shown in the directory */
  @ApiProperty({ nullable: true, type: String }) email: null;
  @ApiProperty({ nullable: true, type: String }) image: string | null;
}

/** One user of the directory as the board UI reads it. */
export class DirectoryEntryDto {
  principalId: string;
  @ApiProperty({ enum: MEMBERSHIP_STATUSES }) status: string;
  @ApiProperty({ enum: MEMBERSHIP_ROLES }) membershipRole: string;
  user: DirectoryEntryUserDto;
}

/** GET user-directory as the board UI reads it (the request carries `X-Paperclip-Route`). */
export class DirectoryPageDto {
  @ApiProperty({ type: [DirectoryEntryDto] }) users: DirectoryEntryDto[];
}
