import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { FOLDER_ERRORS } from './folders.errors';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ActivityContext, LogActivity, NoActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import {
  CreateFolderDto,
  DeletedFolderResponseDto,
  EnsureMyFolderDto,
  FolderKindQueryDto,
  FolderListResponseDto,
  FolderResponseDto,
  MoveFolderDto,
  MoveFolderItemDto,
  MovedFolderItemResponseDto,
  UpdateFolderDto,
} from './dto/folder.dto';
import { FoldersService } from './folders.service';

/** A personal folder is its owner's business: the company's activity log does not show it. */
const personal = (c: ActivityContext) => c.result.ownerUserId !== null && c.result.ownerUserId !== undefined;
const folderDetails = (c: ActivityContext) => ({
  kind: c.result.kind,
  name: c.result.name,
  path: c.result.path,
  parentId: c.result.parentId,
});
const folderActivity = (action: string) => LogActivity(action, { entityType: 'folder', details: folderDetails, skip: personal });

@ApiTags('folders')
@ApiDomainErrors(FOLDER_ERRORS)
@Controller('companies/:companyId/folders')
export class FoldersController {
  constructor(private readonly folders: FoldersService) {}

  /** The routine or skill folders you see (shared ones and your own), with item counts for the sidebar. */
  @Get()
  @Authorize({ callers: ['board', 'agent'] })
  list(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Query() query: FolderKindQueryDto,
  ): Promise<FolderListResponseDto> {
    return this.folders.list(actor, companyId, query.kind);
  }

  /** A shared folder, or a personal one when its parent is under your "My …" folder. 409 when a sibling has the name. */
  @Post()
  @HttpCode(201)
  @Authorize({ callers: ['board'] })
  @folderActivity('folder.created')
  create(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @Body() dto: CreateFolderDto): Promise<FolderResponseDto> {
    return this.folders.create(actor, companyId, dto);
  }

  /** Your personal root folder of a kind ("My Skills", "My Routines"), created on first call; the same folder after. */
  @Post('ensure-my')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @NoActivity('a personal folder is private to its owner')
  ensureMy(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() dto: EnsureMyFolderDto,
  ): Promise<FolderResponseDto> {
    return this.folders.ensureMy(actor, companyId, dto.kind ?? 'skill');
  }

  /** Files a routine or skill in a folder of its kind, or unfiles it (`folderId: null`). */
  @Post('items/move')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity('folder.item_moved', {
    entityType: 'folder_item',
    entityId: (c) => c.result.itemId as string,
    details: (c) => ({ kind: c.result.kind, folderId: c.result.folderId }),
  })
  moveItem(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() dto: MoveFolderItemDto,
  ): Promise<MovedFolderItemResponseDto> {
    return this.folders.moveItem(actor, companyId, dto);
  }

  /** Renames or recolours a folder (system folders keep their name). */
  @Patch(':folderId')
  @Authorize({ callers: ['board'] })
  @folderActivity('folder.updated')
  update(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('folderId') folderId: string,
    @Body() dto: UpdateFolderDto,
  ): Promise<FolderResponseDto> {
    return this.folders.update(actor, companyId, folderId, dto);
  }

  /**
   * Moves a folder with its subfolders and items under another folder of its kind (or to the root),
   * at `position` among its new siblings. Moved under your "My …" folder it becomes personal; moved
   * out, shared. 422 for a move into itself or a descendant.
   */
  @Post(':folderId/move')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @folderActivity('folder.moved')
  move(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('folderId') folderId: string,
    @Body() dto: MoveFolderDto,
  ): Promise<FolderResponseDto> {
    return this.folders.move(actor, companyId, folderId, dto);
  }

  /** Deletes a folder and its subfolders; their routines or skills become unfiled (nothing else is deleted). */
  @Delete(':folderId')
  @Authorize({ callers: ['board'] })
  @folderActivity('folder.deleted')
  remove(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('folderId') folderId: string,
  ): Promise<DeletedFolderResponseDto> {
    return this.folders.remove(actor, companyId, folderId);
  }
}
