import type { Rights } from './tenant-dir';

/** Whether the service process runs as root (reads for tenants are then limited to their rights). */
export const serviceIsRoot = (): boolean => process.getuid?.() === 0;

/**
 * The rights a company's reads are made with: as root, those of any of its agents (the mode bits
 * for others, or for the company's group when agents have identities of their own); null when
 * the service is not root (its agents then run as its own user and read what it reads).
 */
export function tenantRights(companyGid: () => number | null): Rights | null {
  if (!serviceIsRoot()) return null;
  const gid = companyGid();
  return { uid: null, gids: gid === null ? [] : [gid] };
}
