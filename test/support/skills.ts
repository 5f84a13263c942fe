import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestApp } from './test-app';

export const skillMd = (name: string, body = `# ${name}\n\nUse this skill carefully.\n`, extra = '') =>
  `---\nname: ${name}\ndescription: test skill ${name}\n${extra}---\n\n${body}`;

/** A scratch folder agent processes (an unprivileged user when the tests run as root) can use too. */
export function tmpRoot(prefix = 'skills-e2e-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o1777);
  return dir;
}

/** Writes a skill folder `<root>/<name>` with files { relativePath: content }. */
export function writeSkill(root: string, name: string, files: Record<string, string | Buffer>): string {
  const dir = path.join(root, name);
  for (const [rel, content] of Object.entries(files)) {
    const p = path.join(dir, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, content);
  }
  return dir;
}

export async function importSkill(t: TestApp, companyId: string, source: string, expectStatus = 200) {
  const res = await t.http.post(`/api/companies/${companyId}/skills/import`).send({ source });
  if (res.status !== expectStatus) throw new Error(`import ${source}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { imported: Array<Record<string, any>>; warnings: string[]; source: Record<string, unknown> };
}

export async function createSkill(t: TestApp, companyId: string, body: Record<string, unknown>) {
  const res = await t.http.post(`/api/companies/${companyId}/skills`).send(body);
  if (res.status !== 201) throw new Error(`create skill: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Record<string, any>;
}

interface RepoState {
  defaultBranch: string;
  refs: Record<string, string>;
  commits: Record<string, Record<string, string | { symlink: string }>>;
}

/** A local server answering like GitHub's REST API (repos, commits, recursive trees, blobs). */
export class FakeGithub {
  readonly repos = new Map<string, RepoState>();
  readonly requests: string[] = [];
  private blobs = new Map<string, Buffer>();
  private server!: http.Server;
  url = '';
  private n = 0;

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  stop(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }

  /** Pushes a commit with these files to `branch` of owner/repo; returns the commit sha. */
  push(owner: string, repo: string, files: Record<string, string | { symlink: string }>, branch = 'main'): string {
    const key = `${owner}/${repo}`;
    const state = this.repos.get(key) ?? { defaultBranch: 'main', refs: {}, commits: {} };
    const sha = createHash('sha1')
      .update(`${key}:${branch}:${this.n++}:${JSON.stringify(files)}`)
      .digest('hex');
    state.commits[sha] = files;
    state.refs[branch] = sha;
    this.repos.set(key, state);
    return sha;
  }

  private json(res: http.ServerResponse, status: number, body: unknown) {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://x');
    this.requests.push(url.pathname);
    const m = /^\/repos\/([^/]+)\/([^/]+)(?:\/(.*))?$/.exec(url.pathname);
    const state = m && this.repos.get(`${decodeURIComponent(m[1])}/${decodeURIComponent(m[2])}`);
    if (!m || !state) return this.json(res, 404, { message: 'Not Found' });
    const rest = m[3] ?? '';
    if (!rest) return this.json(res, 200, { default_branch: state.defaultBranch });
    let mm = /^commits\/(.+)$/.exec(rest);
    if (mm) {
      const ref = decodeURIComponent(mm[1]);
      const sha = state.refs[ref] ?? (state.commits[ref] ? ref : undefined);
      return sha ? this.json(res, 200, { sha }) : this.json(res, 404, { message: 'No commit found' });
    }
    mm = /^git\/trees\/([0-9a-f]+)$/.exec(rest);
    if (mm) {
      const files = state.commits[mm[1]];
      if (!files) return this.json(res, 404, { message: 'Not Found' });
      const tree: Array<Record<string, unknown>> = [];
      const dirs = new Set<string>();
      for (const [p, content] of Object.entries(files)) {
        const parts = p.split('/');
        for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
        const bytes = Buffer.from(typeof content === 'string' ? content : content.symlink);
        const blobSha = createHash('sha1').update(bytes).digest('hex');
        this.blobs.set(blobSha, bytes);
        tree.push({ path: p, type: 'blob', sha: blobSha, size: bytes.length, mode: typeof content === 'string' ? '100644' : '120000' });
      }
      for (const d of dirs) tree.push({ path: d, type: 'tree', sha: createHash('sha1').update(d).digest('hex'), mode: '040000' });
      return this.json(res, 200, { sha: mm[1], tree, truncated: false });
    }
    mm = /^git\/blobs\/([0-9a-f]+)$/.exec(rest);
    if (mm) {
      const b = this.blobs.get(mm[1]);
      return b
        ? this.json(res, 200, { content: b.toString('base64'), encoding: 'base64', size: b.length })
        : this.json(res, 404, { message: 'Not Found' });
    }
    return this.json(res, 404, { message: 'Not Found' });
  }
}

/** A local HTTP server serving fixed paths (raw URL imports). */
export async function startStaticServer(
  files: Record<string, string | Buffer>,
): Promise<{ url: string; files: Record<string, string | Buffer>; stop(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const body = files[new URL(req.url ?? '/', 'http://x').pathname];
    if (body === undefined) {
      res.writeHead(404);
      res.end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/markdown' });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    files,
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}
