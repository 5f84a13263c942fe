/** Where skill imports fetch from and how much they may fetch (issue 19). */
export interface SkillSourceSettings {
  /** GitHub REST API base (SERVICE_GITHUB_API_URL, default https://api.github.com); tests point it at a local server */
  githubApiUrl: string;
  /** optional token for GitHub (SERVICE_GITHUB_TOKEN); sent only to githubApiUrl, never logged */
  githubToken?: string;
  /** per fetched file (SERVICE_SKILLS_FETCH_MAX_FILE_BYTES, default 1 MiB) */
  maxFileBytes: number;
  /** per import (SERVICE_SKILLS_FETCH_MAX_TOTAL_BYTES, default 16 MiB) */
  maxTotalBytes: number;
  /** per request to a source (SERVICE_SKILLS_FETCH_TIMEOUT_MS, default 15000) */
  timeoutMs: number;
  /** folders local-path imports may read in authenticated mode (SERVICE_SKILLS_LOCAL_ROOTS, comma-separated; project workspaces are always allowed) */
  localRoots: string[];
}

function int(name: string, raw: string | undefined, def: number, min: number, max: number): number {
  if (raw === undefined || raw.trim() === '') return def;
  const n = Number(raw.trim());
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  return n;
}

export function loadSkillSourceSettings(env: NodeJS.ProcessEnv): SkillSourceSettings {
  const githubApiUrl = (env.SERVICE_GITHUB_API_URL?.trim() || 'https://api.github.com').replace(/\/+$/, '');
  if (!/^https?:\/\//.test(githubApiUrl)) throw new Error(`SERVICE_GITHUB_API_URL must be an http(s) URL, got "${githubApiUrl}"`);
  return {
    githubApiUrl,
    githubToken: env.SERVICE_GITHUB_TOKEN?.trim() || undefined,
    maxFileBytes: int('SERVICE_SKILLS_FETCH_MAX_FILE_BYTES', env.SERVICE_SKILLS_FETCH_MAX_FILE_BYTES, 1024 * 1024, 1024, 64 * 1024 * 1024),
    maxTotalBytes: int(
      'SERVICE_SKILLS_FETCH_MAX_TOTAL_BYTES',
      env.SERVICE_SKILLS_FETCH_MAX_TOTAL_BYTES,
      16 * 1024 * 1024,
      1024,
      1024 * 1024 * 1024,
    ),
    timeoutMs: int('SERVICE_SKILLS_FETCH_TIMEOUT_MS', env.SERVICE_SKILLS_FETCH_TIMEOUT_MS, 15_000, 100, 600_000),
    localRoots: (env.SERVICE_SKILLS_LOCAL_ROOTS ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  };
}
