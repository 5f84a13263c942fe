import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { ACCESS_ERRORS } from './access.errors';
import { Body, Controller, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiExtraModels, ApiTags } from '@nestjs/swagger';
import { LogActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import {
  DirectoryPageDto,
  DirectoryUserDto,
  MemberResponseDto,
  MembersPageDto,
  RoleAndGrantsDto,
  UpdateMemberDto,
  UpdateMemberPermissionsDto,
} from './dto/member.dto';
import { ApiBoardUiPage, BoardUiPage } from '../../common/http/board-ui-page';
import { MembersService } from './members.service';

const memberEntity = { entityType: 'company_member' } as const;
/** activity details: what changed, grants as keys and scopes only */
const memberChange = (c: { body: Record<string, unknown> }) => ({ ...c.body });

@ApiTags('members')
@ApiDomainErrors(ACCESS_ERRORS)
@Controller('companies/:companyId')
export class MembersController {
  constructor(private readonly members: MembersService) {}

  /**
   * Memberships of users and agents, with role, status and grants (users' emails only for board
   * callers). The board UI (header `X-Paperclip-Route`) gets `{ members, access }` (MembersPageDto):
   * the human members (agents have their own pages) and what the caller may do on it.
   */
  @Get('members')
  @Authorize({ callers: ['board', 'agent'] })
  @ApiBoardUiPage('`{ members, access }` (MembersPageDto)')
  @ApiExtraModels(MembersPageDto)
  list(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @BoardUiPage() boardUi: boolean,
  ): Promise<MemberResponseDto[] | MembersPageDto> {
    return boardUi ? this.members.page(actor, companyId) : this.members.list(actor, companyId);
  }

  /**
   * Users with a membership in the company (for pickers and mentions). The board UI (header
   * `X-Paperclip-Route`) gets `{ users: [{ principalId, status, membershipRole, user }] }` (DirectoryPageDto).
   */
  @Get('user-directory')
  @Authorize({ callers: ['board', 'agent'] })
  @ApiBoardUiPage('`{ users: [...] }` (DirectoryPageDto)')
  @ApiExtraModels(DirectoryPageDto)
  async directory(@Param('companyId') companyId: string, @BoardUiPage() boardUi: boolean): Promise<DirectoryUserDto[] | DirectoryPageDto> {
    const users = await this.members.directory(companyId);
    if (!boardUi) return users;
    return {
      users: users.map((u) => ({
        principalId: u.id,
        status: u.status,
        membershipRole: u.membershipRole,
        user: { id: u.id, name: u.name, email: null, image: u.image },
      })),
    };
  }

  /** Role and/or status; needs `users:manage_permissions`; the last active owner stays an owner. */
  @Patch('members/:memberId')
  @Authorize({ callers: ['board'] })
  @LogActivity('company_member.updated', { ...memberEntity, details: memberChange })
  update(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('memberId') memberId: string,
    @Body() dto: UpdateMemberDto,
  ): Promise<MemberResponseDto> {
    return this.members.update(actor, companyId, memberId, dto);
  }

  /** Replaces the member's grants; needs `users:manage_permissions`. */
  @Patch('members/:memberId/permissions')
  @Authorize({ callers: ['board'] })
  @LogActivity('company_member.updated', { ...memberEntity, details: memberChange })
  permissions(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('memberId') memberId: string,
    @Body() dto: UpdateMemberPermissionsDto,
  ): Promise<MemberResponseDto> {
    return this.members.update(actor, companyId, memberId, { grants: dto.grants });
  }

  /**
   * Role, status and the whole grant set together, in one transaction, for a user's or an agent's
   * membership; needs `users:manage_permissions`; the last active owner cannot be demoted.
   */
  @Patch('members/:memberId/role-and-grants')
  @Authorize({ callers: ['board'] })
  @LogActivity('company_member.updated', { ...memberEntity, details: memberChange })
  roleAndGrants(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('memberId') memberId: string,
    @Body() dto: RoleAndGrantsDto,
  ): Promise<MemberResponseDto> {
    return this.members.update(actor, companyId, memberId, { membershipRole: dto.membershipRole, status: dto.status, grants: dto.grants });
  }

  /** Status becomes inactive; the member loses access. Needs `users:manage_permissions`. */
  @Post('members/:memberId/archive')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity('company_member.archived', { ...memberEntity, details: () => ({}) })
  archive(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('memberId') memberId: string,
  ): Promise<MemberResponseDto> {
    return this.members.update(actor, companyId, memberId, { status: 'inactive' });
  }
}
