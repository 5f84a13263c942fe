import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsNotEmpty, IsString, IsUUID, Matches, Max, MaxLength, Min } from 'class-validator';
import { RefersTo } from '../../../common/references/refers-to.decorator';
import { FOLDER_KINDS, type FolderKind } from '../folders.repository';
import { OmittableNotNull, Nullable } from '../../../common/http/optional';

/** The sidebar's folder colours (null: the default). */
export const FOLDER_COLORS = ['indigo', 'violet', 'emerald', 'cyan', 'amber', 'rose', 'slate'] as const;
/** Folders nest at most this deep (a root folder is depth 0). */
export const MAX_FOLDER_DEPTH = 8;
const NAME = /\S/;

export class FolderKindQueryDto {
  @IsIn(FOLDER_KINDS) @ApiProperty({ enum: FOLDER_KINDS }) kind: FolderKind;
}

export class CreateFolderDto {
  @IsIn(FOLDER_KINDS) @ApiProperty({ enum: FOLDER_KINDS }) kind: FolderKind;
  /** unique among its siblings, case-insensitively; surrounding spaces are trimmed */
  @IsString() @Matches(NAME, { message: 'name must not be blank' }) @MaxLength(120) name: string;
  /** the parent folder (same kind); absent or null: a root folder. Under your "My …" folder the new folder is personal too. */
  @RefersTo('folder')
  @Nullable()
  @IsUUID()
  @ApiPropertyOptional({ nullable: true, type: String, format: 'uuid' })
  parentId?: string | null;
  @Nullable() @IsIn(FOLDER_COLORS) @ApiPropertyOptional({ nullable: true, enum: FOLDER_COLORS }) color?: string | null;
}

export class EnsureMyFolderDto {
  /** default `skill` */
  @OmittableNotNull() @IsIn(FOLDER_KINDS) @ApiPropertyOptional({ enum: FOLDER_KINDS }) kind?: FolderKind;
}

export class UpdateFolderDto {
  @OmittableNotNull() @IsString() @Matches(NAME, { message: 'name must not be blank' }) @MaxLength(120) name?: string;
  @Nullable() @IsIn(FOLDER_COLORS) @ApiPropertyOptional({ nullable: true, enum: FOLDER_COLORS }) color?: string | null;
}

export class MoveFolderDto {
  /** the new parent (same kind), or null for the root */
  @RefersTo('folder') @Nullable() @IsUUID() @ApiProperty({ nullable: true, type: String, format: 'uuid' }) parentId: string | null;
  /** place among the new siblings (0 = first); default: last */
  @OmittableNotNull() @IsInt() @Min(0) @Max(100_000) position?: number;
}

export class MoveFolderItemDto {
  @IsIn(FOLDER_KINDS) @ApiProperty({ enum: FOLDER_KINDS }) kind: FolderKind;
  /** the routine or skill id */
  @IsUUID() @IsNotEmpty() itemId: string;
  /** the folder (same kind), or null to unfile the item */
  @RefersTo('folder') @Nullable() @IsUUID() @ApiProperty({ nullable: true, type: String, format: 'uuid' }) folderId: string | null;
}

export class FolderResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) companyId: string;
  @ApiProperty({ enum: FOLDER_KINDS }) kind: FolderKind;
  name: string;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) parentId: string | null;
  @ApiProperty({ nullable: true, type: String }) color: string | null;
  position: number;
  /** set on a personal folder (only its owner sees it) */
  @ApiProperty({ nullable: true, type: String }) ownerUserId: string | null;
  /** `my` for a user's personal root folder, else null */
  @ApiProperty({ nullable: true, type: String }) systemKey: string | null;
  /** names from the root, joined by `/` */
  path: string;
  /** 0 for a root folder */
  depth: number;
  /** items filed directly in this folder */
  itemCount: number;
  @ApiProperty({ nullable: true, type: String }) createdByUserId: string | null;
  createdAt: string;
  updatedAt: string;
}

export class FolderListResponseDto {
  /** the folders you see (shared ones and your own), parents before children, siblings by position */
  @ApiProperty({ type: [FolderResponseDto] }) folders: FolderResponseDto[];
  /** every item of the kind in the company */
  allCount: number;
  /** items in no folder */
  unfiledCount: number;
}

export class DeletedFolderResponseDto extends FolderResponseDto {
  /** the folder and its subfolders */
  @ApiProperty({ type: [String] }) deletedFolderIds: string[];
}

export class MovedFolderItemResponseDto {
  @ApiProperty({ enum: FOLDER_KINDS }) kind: FolderKind;
  @ApiProperty({ format: 'uuid' }) itemId: string;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) folderId: string | null;
  @ApiProperty({ format: 'uuid' }) companyId: string;
}
