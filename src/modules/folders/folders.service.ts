import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import {
  CreateFolderDto,
  DeletedFolderResponseDto,
  FolderListResponseDto,
  FolderResponseDto,
  MAX_FOLDER_DEPTH,
  MoveFolderDto,
  MoveFolderItemDto,
  MovedFolderItemResponseDto,
  UpdateFolderDto,
} from './dto/folder.dto';
import { FolderItemCounts, FolderItemRegistry, toFolderItemCounts } from './folder-items.port';
import { folderError } from './folders.errors';
import { FolderKind, FolderRecord, FoldersRepository } from './folders.repository';

const MY_FOLDER_NAMES: Record<FolderKind, string> = { routine: 'My Routines', skill: 'My Skills' };

/** The user a caller acts as (agents own no personal folders). */
const userOf = (actor: Actor): string | null => (actor.kind === 'board' ? actor.userId : null);

/** One kind's folders as a caller sees them, with paths and depths. */
class FolderTree {
  private readonly byId: Map<string, FolderRecord>;

  constructor(readonly folders: FolderRecord[]) {
    this.byId = new Map(folders.map((f) => [f.id, f]));
  }

  get(id: string): FolderRecord | undefined {
    return this.byId.get(id);
  }

  /** From the root down to the folder. */
  ancestry(f: FolderRecord): FolderRecord[] {
    const chain: FolderRecord[] = [];
    const seen = new Set<string>();
    for (let cur: FolderRecord | undefined = f; cur && !seen.has(cur.id); cur = cur.parentId ? this.byId.get(cur.parentId) : undefined) {
      seen.add(cur.id);
      chain.unshift(cur);
    }
    return chain;
  }

  depth(f: FolderRecord): number {
    return this.ancestry(f).length - 1;
  }

  /** Levels below the folder (0 for a leaf). */
  height(f: FolderRecord): number {
    const children = this.folders.filter((c) => c.parentId === f.id);
    return children.length ? 1 + Math.max(...children.map((c) => this.height(c))) : 0;
  }

  isWithin(candidate: FolderRecord, ancestorId: string): boolean {
    return this.ancestry(candidate).some((a) => a.id === ancestorId);
  }

  view(f: FolderRecord, counts: FolderItemCounts): FolderResponseDto {
    const chain = this.ancestry(f);
    return {
      id: f.id,
      companyId: f.companyId,
      kind: f.kind,
      name: f.name,
      parentId: f.parentId,
      color: f.color,
      position: f.position,
      ownerUserId: f.ownerUserId,
      systemKey: f.systemKey,
      path: chain.map((a) => a.name).join('/'),
      depth: chain.length - 1,
      itemCount: counts.byFolder.get(f.id) ?? 0,
      createdByUserId: f.createdByUserId,
      createdAt: f.createdAt,
      updatedAt: f.updatedAt,
    };
  }

  /** Parents before children, siblings by position then name. */
  ordered(): FolderRecord[] {
    const out: FolderRecord[] = [];
    const visit = (parentId: string | null) => {
      for (const f of this.folders.filter((x) => x.parentId === parentId)) {
        out.push(f);
        visit(f.id);
      }
    };
    visit(null);
    // a folder whose parent the caller cannot see (never the case today: a subtree has one owner) still shows
    for (const f of this.folders) if (!out.includes(f)) out.push(f);
    return out;
  }
}

/**
 * Folders of routines and skills: a tree per company and kind. Shared folders are the company's;
 * a user's "My …" folder and everything under it are theirs alone. Items (routines, skills) stay
 * visible to everyone whatever folder they are filed in; filing only organises the sidebars.
 */
@Injectable()
export class FoldersService {
  constructor(
    private readonly repo: FoldersRepository,
    private readonly items: FolderItemRegistry,
    private readonly db: Db,
  ) {}

  async list(actor: Actor, companyId: string, kind: FolderKind): Promise<FolderListResponseDto> {
    const [tree, counts] = await Promise.all([this.tree(actor, companyId, kind), this.counts(companyId, kind)]);
    return {
      folders: tree.ordered().map((f) => tree.view(f, counts)),
      allCount: counts.total,
      unfiledCount: counts.unfiled,
    };
  }

  async create(actor: Actor, companyId: string, dto: CreateFolderDto): Promise<FolderResponseDto> {
    return this.db.transaction(async () => {
      await this.repo.lockTree(companyId, dto.kind);
      const tree = await this.tree(actor, companyId, dto.kind);
      const parent = dto.parentId ? await this.parentOf(actor, companyId, tree, dto.kind, dto.parentId) : null;
      if (parent && tree.depth(parent) + 1 > MAX_FOLDER_DEPTH) {
        throw folderError('folder_too_deep', `Folders nest at most ${MAX_FOLDER_DEPTH + 1} levels deep`, { field: 'parentId' });
      }
      const name = dto.name.trim();
      const owner = parent?.ownerUserId ?? null;
      await this.assertNameFree(companyId, dto.kind, parent?.id ?? null, owner, name);
      const created = await this.repo.insert(companyId, {
        kind: dto.kind,
        name,
        parentId: parent?.id ?? null,
        color: dto.color ?? null,
        ownerUserId: owner,
        systemKey: null,
        createdByUserId: userOf(actor),
      });
      return this.viewOf(actor, companyId, created!);
    });
  }

  /** The caller's personal root folder of a kind, created on first use (idempotent). */
  async ensureMy(actor: Actor, companyId: string, kind: FolderKind): Promise<FolderResponseDto> {
    const userId = userOf(actor);
    if (!userId) throw folderError('folder_personal', 'Only a board user has a personal folder');
    const existing = await this.repo.findMy(companyId, kind, userId);
    if (existing) return this.viewOf(actor, companyId, existing);
    return this.db.transaction(async () => {
      await this.repo.lockTree(companyId, kind);
      const mine =
        (await this.repo.findMy(companyId, kind, userId)) ??
        (await this.repo.insert(companyId, {
          kind,
          name: MY_FOLDER_NAMES[kind],
          parentId: null,
          color: null,
          ownerUserId: userId,
          systemKey: 'my',
          createdByUserId: userId,
        })) ??
        (await this.repo.findMy(companyId, kind, userId));
      return this.viewOf(actor, companyId, mine!);
    });
  }

  async update(actor: Actor, companyId: string, folderId: string, dto: UpdateFolderDto): Promise<FolderResponseDto> {
    return this.db.transaction(async () => {
      const folder = await this.load(actor, companyId, folderId);
      await this.repo.lockTree(companyId, folder.kind);
      const name = dto.name?.trim();
      if (name !== undefined && name !== folder.name) {
        if (folder.systemKey) throw folderError('folder_system', `"${folder.name}" is a system folder and keeps its name`);
        await this.assertNameFree(companyId, folder.kind, folder.parentId, folder.ownerUserId, name, folder.id);
      }
      const updated = await this.repo.update(companyId, folder.id, { name, color: dto.color });
      return this.viewOf(actor, companyId, updated);
    });
  }

  /** Moves a folder (with its subtree and items) under another folder of the same kind, or to the root. */
  async move(actor: Actor, companyId: string, folderId: string, dto: MoveFolderDto): Promise<FolderResponseDto> {
    return this.db.transaction(async () => {
      const found = await this.load(actor, companyId, folderId);
      await this.repo.lockTree(companyId, found.kind);
      const tree = await this.tree(actor, companyId, found.kind);
      const folder = tree.get(found.id) ?? found;
      if (folder.systemKey) throw folderError('folder_system', `"${folder.name}" is a system folder and stays at the root`);
      const parent = dto.parentId ? await this.parentOf(actor, companyId, tree, folder.kind, dto.parentId) : null;
      if (parent && (parent.id === folder.id || tree.isWithin(parent, folder.id))) {
        throw folderError('folder_cycle', 'A folder cannot move into itself or one of its subfolders', { field: 'parentId' });
      }
      if (parent && tree.depth(parent) + 1 + tree.height(folder) > MAX_FOLDER_DEPTH) {
        throw folderError('folder_too_deep', `Folders nest at most ${MAX_FOLDER_DEPTH + 1} levels deep`, { field: 'parentId' });
      }
      const owner = parent?.ownerUserId ?? null;
      await this.assertNameFree(companyId, folder.kind, parent?.id ?? null, owner, folder.name, folder.id);
      const siblings = tree.folders.filter((f) => f.parentId === (parent?.id ?? null) && f.ownerUserId === owner && f.id !== folder.id);
      const position = dto.position ?? (siblings.length ? Math.max(...siblings.map((s) => s.position)) + 1 : 0);
      const moved = await this.repo.move(companyId, folder.id, parent?.id ?? null, position, owner);
      return this.viewOf(actor, companyId, moved);
    });
  }

  /** Files a routine or skill in a folder of its kind (null: unfiled). */
  async moveItem(actor: Actor, companyId: string, dto: MoveFolderItemDto): Promise<MovedFolderItemResponseDto> {
    return this.db.transaction(async () => {
      if (dto.folderId) await this.assertFileable(actor, companyId, dto.kind, dto.folderId);
      const found = await this.items.store(dto.kind).setFolder(companyId, dto.itemId, dto.folderId ?? null);
      if (!found) throw folderError('not_found', `${dto.kind === 'routine' ? 'Routine' : 'Skill'} not found`);
      return { kind: dto.kind, itemId: dto.itemId, folderId: dto.folderId ?? null, companyId };
    });
  }

  /** Deletes a folder and its subfolders; their items become unfiled. System folders stay. */
  async remove(actor: Actor, companyId: string, folderId: string): Promise<DeletedFolderResponseDto> {
    return this.db.transaction(async () => {
      const folder = await this.load(actor, companyId, folderId);
      if (folder.systemKey) throw folderError('folder_system', `"${folder.name}" is a system folder and cannot be deleted`);
      await this.repo.lockTree(companyId, folder.kind);
      const view = await this.viewOf(actor, companyId, folder);
      const deletedFolderIds = await this.repo.deleteTree(companyId, folder.id);
      return { ...view, deletedFolderIds };
    });
  }

  /**
   * For the item modules: a folder an item of `kind` may be filed in by this caller (exists in the
   * company, same kind, shared or the caller's own). 422 names `folderId` otherwise.
   */
  async assertFileable(actor: Actor | null, companyId: string, kind: FolderKind, folderId: string): Promise<void> {
    const folder = isUuid(folderId) ? await this.repo.get(companyId, folderId) : null;
    const visible = folder && (folder.ownerUserId === null || (actor && folder.ownerUserId === userOf(actor)));
    if (!folder || !visible) {
      throw folderError('invalid_reference', 'folderId must reference a folder of this company', { field: 'folderId' });
    }
    if (folder.kind !== kind) {
      throw folderError('folder_kind_mismatch', `A ${kind} cannot be filed in a ${folder.kind} folder`, { field: 'folderId' });
    }
  }

  // ---- helpers

  private tree(actor: Actor, companyId: string, kind: FolderKind): Promise<FolderTree> {
    return this.repo.visible(companyId, kind, userOf(actor)).then((folders) => new FolderTree(folders));
  }

  private async counts(companyId: string, kind: FolderKind): Promise<FolderItemCounts> {
    return toFolderItemCounts(await this.items.store(kind).counts(companyId));
  }

  /** A folder the caller sees (personal folders of others are not found). */
  private async load(actor: Actor, companyId: string, folderId: string): Promise<FolderRecord> {
    const folder = isUuid(folderId) ? await this.repo.get(companyId, folderId) : null;
    if (!folder || (folder.ownerUserId !== null && folder.ownerUserId !== userOf(actor)))
      throw folderError('not_found', 'Folder not found');
    return folder;
  }

  /** The parent a body names: a folder of the same kind the caller sees, else 422 on `parentId`. */
  private async parentOf(actor: Actor, companyId: string, tree: FolderTree, kind: FolderKind, id: string): Promise<FolderRecord> {
    const inTree = tree.get(id);
    if (inTree) return inTree;
    const other = await this.repo.get(companyId, id);
    if (other && other.kind !== kind && (other.ownerUserId === null || other.ownerUserId === userOf(actor))) {
      throw folderError('folder_kind_mismatch', `A ${kind} folder cannot go into a ${other.kind} folder`, { field: 'parentId' });
    }
    throw folderError('invalid_reference', 'parentId must reference a folder of this company', { field: 'parentId' });
  }

  private async assertNameFree(
    companyId: string,
    kind: FolderKind,
    parentId: string | null,
    owner: string | null,
    name: string,
    exceptId: string | null = null,
  ): Promise<void> {
    if (await this.repo.nameTaken(companyId, kind, parentId, owner, name, exceptId)) {
      throw folderError('folder_name_taken', `A folder named "${name}" already exists here`, { field: 'name' });
    }
  }

  private async viewOf(actor: Actor, companyId: string, folder: FolderRecord): Promise<FolderResponseDto> {
    const [tree, counts] = await Promise.all([this.tree(actor, companyId, folder.kind), this.counts(companyId, folder.kind)]);
    return (tree.get(folder.id) ? tree : new FolderTree([...tree.folders, folder])).view(tree.get(folder.id) ?? folder, counts);
  }
}
