import { plainToInstance } from 'class-transformer';
import { validate, ValidationError } from 'class-validator';
import { CreateWorkspaceDto } from './dto/workspace.dto';
import { projectError } from './projects.errors';
import type { RuntimeConfig, WorkspaceSourceType } from './project-workspace.entity';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function flatten(errors: ValidationError[], parent = ''): Array<{ field: string; messages: string[] }> {
  return errors.flatMap((e) => {
    const field = parent ? `${parent}.${e.property}` : e.property;
    const own = e.constraints ? [{ field, messages: Object.values(e.constraints) }] : [];
    return [...own, ...flatten(e.children ?? [], field)];
  });
}

const invalid = (message: string, fields: Array<{ field: string; messages: string[] }>) =>
  projectError('invalid_workspace', `Invalid workspace: ${message}`, { fields });

/** The `workspace` of a project create, validated like POST workspaces; failures are 422 (the creation rolls back). */
export async function parseWorkspacePayload(raw: Record<string, unknown>): Promise<CreateWorkspaceDto> {
  const dto = plainToInstance(CreateWorkspaceDto, raw);
  const errors = await validate(dto, { whitelist: true });
  if (errors.length) {
    const fields = flatten(errors, 'workspace');
    throw invalid(fields.map((f) => f.messages.join(', ')).join('; '), fields);
  }
  return dto;
}

export interface WorkspaceLocation {
  sourceType: WorkspaceSourceType;
  cwd: string | null;
  repoUrl: string | null;
  remoteWorkspaceRef: string | null;
  runtimeConfig: RuntimeConfig | null;
}

/** At least one of cwd or repoUrl; `remote_managed` may instead name its remote workspace, and needs one of the two. */
export function assertWorkspaceRules(ws: WorkspaceLocation): void {
  if (ws.sourceType === 'remote_managed') {
    if (!ws.remoteWorkspaceRef && !ws.repoUrl) {
      throw invalid('a remote_managed workspace requires remoteWorkspaceRef or repoUrl', [
        { field: 'remoteWorkspaceRef', messages: ['remoteWorkspaceRef or repoUrl is required for remote_managed'] },
      ]);
    }
  } else if (!ws.cwd && !ws.repoUrl) {
    throw invalid('at least one of cwd or repoUrl is required', [{ field: 'cwd', messages: ['cwd or repoUrl is required'] }]);
  }
  const hc = ws.runtimeConfig?.healthCheck;
  if (hc?.url && healthCheckPath(hc, ws.runtimeConfig?.port) === null) {
    throw invalid("runtimeConfig.healthCheck.url may only name the workspace's own port on loopback", [
      { field: 'runtimeConfig.healthCheck.url', messages: ['must be http://127.0.0.1:<runtimeConfig.port>/… (or use healthCheck.path)'] },
    ]);
  }
  const env = ws.runtimeConfig?.env;
  if (env) {
    for (const [name, value] of Object.entries(env)) {
      if (!ENV_NAME.test(name) || typeof value !== 'string') {
        throw invalid(`runtimeConfig.env.${name} must be a variable name with a string value`, [
          { field: `runtimeConfig.env.${name}`, messages: ['must be a variable name with a string value'] },
        ]);
      }
    }
  }
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * The path a health check polls on the workspace's own port, or null when it names anything else:
 * `path`, or the path of a `url` on loopback at `port` (http only).
 */
export function healthCheckPath(hc: { url?: string; path?: string }, port: number | undefined): string | null {
  if (!hc.url) return hc.path ?? '/';
  let u: URL;
  try {
    u = new URL(hc.url);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' || !LOOPBACK.has(u.hostname) || u.username || u.password || !port || Number(u.port) !== port) return null;
  return `${u.pathname}${u.search}`;
}

/** Source type when omitted: a repository without a local path is `git_repo`, anything else `local_path`. */
export function defaultSourceType(cwd: string | null | undefined, repoUrl: string | null | undefined): WorkspaceSourceType {
  return repoUrl && !cwd ? 'git_repo' : 'local_path';
}

/** Name when omitted: the last segment of the path or repository, else `workspace`. */
export function defaultWorkspaceName(
  cwd: string | null | undefined,
  repoUrl: string | null | undefined,
  ref: string | null | undefined,
): string {
  const source = cwd ?? repoUrl ?? ref ?? '';
  const last = source
    .replace(/\.git$/, '')
    .split(/[/:]/)
    .filter(Boolean)
    .pop();
  return last?.slice(0, 200) || 'workspace';
}
