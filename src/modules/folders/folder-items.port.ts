import { Injectable } from '@nestjs/common';
import type { FolderKind } from './folders.repository';

/** How many items of a kind a company has, how many are unfiled, and how many each folder holds. */
export interface FolderItemCounts {
  total: number;
  unfiled: number;
  byFolder: Map<string, number>;
}

/**
 * What the owner of a filed item (routines, skills) lends the folders module: counts, and setting
 * an item's folder. The owning module registers its store at start-up, so folders depend on no
 * item module and the item modules keep their tables.
 */
export interface FolderItemStore {
  counts(companyId: string): Promise<Array<{ folderId: string | null; n: number }>>;
  /** false when the company has no such item */
  setFolder(companyId: string, itemId: string, folderId: string | null): Promise<boolean>;
}

@Injectable()
export class FolderItemRegistry {
  private readonly stores = new Map<FolderKind, FolderItemStore>();

  register(kind: FolderKind, store: FolderItemStore): void {
    this.stores.set(kind, store);
  }

  store(kind: FolderKind): FolderItemStore {
    const s = this.stores.get(kind);
    if (!s) throw new Error(`no folder item store registered for ${kind}`);
    return s;
  }
}

export function toFolderItemCounts(rows: Array<{ folderId: string | null; n: number }>): FolderItemCounts {
  const byFolder = new Map<string, number>();
  let total = 0;
  let unfiled = 0;
  for (const r of rows) {
    const n = Number(r.n);
    total += n;
    if (r.folderId) byFolder.set(r.folderId, n);
    else unfiled += n;
  }
  return { total, unfiled, byFolder };
}
