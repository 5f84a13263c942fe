import { bearer, createCompany } from '../support/factories';
import { activityActions, PNG_1x1, upload } from '../support/documents';
import { agentHeaders, createIssue, insertAgent, insertCompany } from '../support/issues';
import { createTestApp, TestApp } from '../support/test-app';

/** Buffers any response body (supertest only buffers text and JSON by default). */
const binary = (res: unknown, cb: (err: Error | null, body: Buffer) => void) => {
  const stream = res as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('end', () => cb(null, Buffer.concat(chunks)));
};

describe('attachments', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SERVICE_MAX_UPLOAD_BYTES: '2048' } });
  });
  afterAll(() => t.close());

  const setup = async () => {
    const c = await createCompany(t);
    const issue = await createIssue(t, c.id);
    return { c, issue };
  };
  const content = (path: string) => t.http.get(path).buffer(true).parse(binary);

  describe('POST /api/companies/:companyId/issues/:issueId/attachments', () => {
    it('stores the file with sha256 and size under a company-prefixed key and returns the three paths', async () => {
      const { c, issue } = await setup();
      const res = await upload(t, c.id, issue.id, 'pixel.png', 'image/png', PNG_1x1).expect(201);
      const a = res.body;
      expect(a).toMatchObject({
        issueId: issue.id,
        companyId: c.id,
        contentType: 'image/png',
        byteSize: PNG_1x1.length,
        originalFilename: 'pixel.png',
        issueCommentId: null,
        createdByUserId: 'local-board',
        contentPath: `/api/attachments/${a.id}/content`,
        openPath: `/api/attachments/${a.id}/content`,
        downloadPath: `/api/attachments/${a.id}/content?download=1`,
      });
      expect(a.sha256).toMatch(/^[0-9a-f]{64}$/);
      const [row] = await t.dataSource.query(
        `SELECT s.storage_key FROM issue_attachments x JOIN assets s ON s.id = x.asset_id WHERE x.id = $1`,
        [a.id],
      );
      expect(row.storage_key.startsWith(`${c.id}/`)).toBe(true);
      expect(await activityActions(t, issue.id)).toContain('issue.attachment_added');
      const got = await content(a.contentPath).expect(200);
      expect(Buffer.compare(got.body, PNG_1x1)).toBe(0);
      expect(got.headers['content-type']).toMatch(/^image\/png/);
    });

    it('accepts the issue identifier and an agent uploader', async () => {
      const { c, issue } = await setup();
      const agent = await insertAgent(t, c.id);
      const res = await upload(t, c.id, issue.identifier, 'a.txt', 'text/plain', 'hi', { headers: agentHeaders(agent) }).expect(201);
      expect(res.body).toMatchObject({ issueId: issue.id, createdByAgentId: agent.id, createdByUserId: null });
    });

    it('rejects an empty file, a missing file, two files and an oversize file', async () => {
      const { c, issue } = await setup();
      const path = `/api/companies/${c.id}/issues/${issue.id}/attachments`;
      expect((await upload(t, c.id, issue.id, 'empty.txt', 'text/plain', '').expect(400)).body.code).toBe('empty_file');
      await t.http.post(path).field('issueCommentId', '').expect(400);
      await t.http.post(path).send({ file: 'x' }).expect(400);
      await t.http.post(path).attach('file', Buffer.from('a'), 'a.txt').attach('file', Buffer.from('b'), 'b.txt').expect(400);
      await t.http.post(path).attach('file', Buffer.from('a'), 'a.txt').attach('other', Buffer.from('b'), 'b.txt').expect(400);
      await upload(t, c.id, issue.id, 'big.txt', 'text/plain', 'x'.repeat(2049)).expect(413);
      expect((await t.http.get(`/api/issues/${issue.id}/attachments`).expect(200)).body).toEqual([]);
    });

    it('rejects a disallowed content type with 415; a generic type with a video extension counts as video', async () => {
      const { c, issue } = await setup();
      await upload(t, c.id, issue.id, 'tool.exe', 'application/x-msdownload', 'MZ').expect(415);
      await upload(t, c.id, issue.id, 'blob.bin', 'application/octet-stream', 'xx').expect(415);
      const clip = await upload(t, c.id, issue.id, 'clip.mov', 'application/octet-stream', 'moov').expect(201);
      expect(clip.body.contentType).toBe('application/octet-stream');
      const got = await content(clip.body.contentPath).expect(200);
      expect(got.headers['content-type']).toBe('video/quicktime');
    });

    it("links an issueCommentId of the same issue; another issue's comment is 422", async () => {
      const { c, issue } = await setup();
      const other = await createIssue(t, c.id);
      const mine = (await t.http.post(`/api/issues/${issue.id}/comments`).send({ body: 'see file' }).expect(201)).body;
      const theirs = (await t.http.post(`/api/issues/${other.id}/comments`).send({ body: 'x' }).expect(201)).body;
      const ok = await upload(t, c.id, issue.id, 'a.txt', 'text/plain', 'x', { fields: { issueCommentId: mine.id } }).expect(201);
      expect(ok.body.issueCommentId).toBe(mine.id);
      await upload(t, c.id, issue.id, 'a.txt', 'text/plain', 'x', { fields: { issueCommentId: theirs.id } }).expect(422);
      await upload(t, c.id, issue.id, 'a.txt', 'text/plain', 'x', { fields: { issueCommentId: 'nope' } }).expect(400);
    });

    it('answers 404 for an issue of another company in the path and for an agent of another company', async () => {
      const { c, issue } = await setup();
      const other = await createCompany(t);
      await upload(t, other.id, issue.id, 'a.txt', 'text/plain', 'x').expect(404);
      const stranger = await insertAgent(t, other.id);
      await upload(t, c.id, issue.id, 'a.txt', 'text/plain', 'x', { headers: agentHeaders(stranger) }).expect(403);
    });

    it('honours SERVICE_ALLOWED_ATTACHMENT_TYPES with wildcards', async () => {
      const s = await createTestApp({ env: { SERVICE_ALLOWED_ATTACHMENT_TYPES: 'application/vnd.custom+json,audio/*' } });
      try {
        const c = await createCompany(s);
        const issue = await createIssue(s, c.id);
        await upload(s, c.id, issue.id, 'a.wav', 'audio/wav', 'RIFF').expect(201);
        await upload(s, c.id, issue.id, 'a.json', 'application/vnd.custom+json', '{}').expect(201);
        await upload(s, c.id, issue.id, 'a.png', 'image/png', PNG_1x1).expect(415);
      } finally {
        await s.close();
      }
    });
  });

  describe('GET /api/issues/:issueId/attachments', () => {
    it("lists the issue's attachments with their paths, oldest first", async () => {
      const { c, issue } = await setup();
      const a = (await upload(t, c.id, issue.id, 'a.txt', 'text/plain', 'a').expect(201)).body;
      const b = (await upload(t, c.id, issue.id, 'b.txt', 'text/plain', 'b').expect(201)).body;
      const list = (await t.http.get(`/api/issues/${issue.id}/attachments`).expect(200)).body;
      expect(list.map((x: { id: string }) => x.id)).toEqual([a.id, b.id]);
      expect(list[0]).toMatchObject({ contentPath: a.contentPath, openPath: a.contentPath, downloadPath: `${a.contentPath}?download=1` });
      const stranger = await insertAgent(t, (await createCompany(t)).id);
      await t.http.get(`/api/issues/${issue.id}/attachments`).set(agentHeaders(stranger)).expect(404);
    });
  });

  describe('GET /api/attachments/:attachmentId/content', () => {
    it('answers Range requests with 206 and the bytes, 416 outside the file', async () => {
      const { c, issue } = await setup();
      const a = (await upload(t, c.id, issue.id, 'notes.txt', 'text/plain', 'hello world').expect(201)).body;
      const full = await content(a.contentPath).expect(200);
      expect(full.headers['accept-ranges']).toBe('bytes');
      expect(full.headers['content-length']).toBe('11');
      const cases: Array<[string, string, string]> = [
        ['bytes=6-10', 'world', 'bytes 6-10/11'],
        ['bytes=0-4', 'hello', 'bytes 0-4/11'],
        ['bytes=6-', 'world', 'bytes 6-10/11'],
        ['bytes=-5', 'world', 'bytes 6-10/11'],
        ['bytes=6-99', 'world', 'bytes 6-10/11'],
      ];
      for (const [range, text, cr] of cases) {
        const r = await content(a.contentPath).set('Range', range).expect(206);
        expect([range, r.body.toString(), r.headers['content-range']]).toEqual([range, text, cr]);
      }
      const bad = await t.http.get(a.contentPath).set('Range', 'bytes=11-20').expect(416);
      expect(bad.headers['content-range']).toBe('bytes */11');
      // malformed or multi-range headers are ignored: the whole file
      expect((await content(a.contentPath).set('Range', 'bytes=0-1,4-5').expect(200)).body.toString()).toBe('hello world');
      expect((await content(a.contentPath).set('Range', 'items=0-1').expect(200)).body.toString()).toBe('hello world');
    });

    it('sets inline or attachment disposition, nosniff, and a sandboxing CSP for SVG', async () => {
      const { c, issue } = await setup();
      const png = (await upload(t, c.id, issue.id, 'pixel.png', 'image/png', PNG_1x1).expect(201)).body;
      const html = (await upload(t, c.id, issue.id, 'page.html', 'text/html', '<b>x</b>').expect(201)).body;
      const svg = (await upload(t, c.id, issue.id, 'logo.svg', 'image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg"/>').expect(201))
        .body;
      const p = await content(png.contentPath).expect(200);
      expect(p.headers['content-disposition']).toMatch(/^inline; filename="pixel.png"/);
      expect(p.headers['x-content-type-options']).toBe('nosniff');
      expect((await content(png.downloadPath).expect(200)).headers['content-disposition']).toMatch(/^attachment; filename="pixel.png"/);
      expect((await content(html.contentPath).expect(200)).headers['content-disposition']).toMatch(/^attachment/);
      const s = await content(svg.contentPath).expect(200);
      expect(s.headers['content-security-policy']).toContain('sandbox');
      expect(s.headers['content-disposition']).toMatch(/^inline/);
    });

    it('infers video types for generic stored types from the extension', async () => {
      const { c, issue } = await setup();
      const cases: Array<[string, string, string]> = [
        ['a.mp4', 'application/octet-stream', 'video/mp4'],
        ['a.m4v', 'binary/octet-stream', 'video/mp4'],
        ['a.webm', 'application/x-binary', 'video/webm'],
        ['a.qt', 'application/octet-stream', 'video/quicktime'],
      ];
      for (const [name, stored, served] of cases) {
        const a = (await upload(t, c.id, issue.id, name, stored, 'data').expect(201)).body;
        const r = await content(a.contentPath).expect(200);
        expect([name, r.headers['content-type'], r.headers['content-disposition'].split(';')[0]]).toEqual([name, served, 'inline']);
      }
    });

    it('answers 404 for unknown ids and for an agent of another company (one answer)', async () => {
      const { c, issue } = await setup();
      const a = (await upload(t, c.id, issue.id, 'a.txt', 'text/plain', 'x').expect(201)).body;
      await t.http.get('/api/attachments/00000000-0000-4000-8000-000000000000/content').expect(404);
      await t.http.get('/api/attachments/nope/content').expect(404);
      const stranger = await insertAgent(t, (await createCompany(t)).id);
      await t.http.get(a.contentPath).set(agentHeaders(stranger)).expect(404);
    });
  });

  describe('DELETE /api/attachments/:attachmentId', () => {
    it('lets the board or the uploading agent delete, not another agent, and removes the bytes', async () => {
      const { c, issue } = await setup();
      const uploader = await insertAgent(t, c.id);
      const other = await insertAgent(t, c.id);
      const a = (await upload(t, c.id, issue.id, 'a.txt', 'text/plain', 'x', { headers: agentHeaders(uploader) }).expect(201)).body;
      const b = (await upload(t, c.id, issue.id, 'b.txt', 'text/plain', 'y').expect(201)).body;
      const [row] = await t.dataSource.query(
        `SELECT s.storage_key FROM issue_attachments x JOIN assets s ON s.id = x.asset_id WHERE x.id = $1`,
        [a.id],
      );
      await t.http.delete(`/api/attachments/${a.id}`).set(agentHeaders(other)).expect(403);
      await t.http.delete(`/api/attachments/${b.id}`).set(agentHeaders(uploader)).expect(403);
      await t.http.delete(`/api/attachments/${a.id}`).set(agentHeaders(uploader)).expect(200);
      await t.http.delete(`/api/attachments/${b.id}`).expect(200);
      await t.http.get(a.contentPath).expect(404);
      await t.http.delete(`/api/attachments/${a.id}`).expect(404);
      expect((await t.http.get(`/api/issues/${issue.id}/attachments`).expect(200)).body).toEqual([]);
      const fs = await import('node:fs');
      const path = await import('node:path');
      expect(fs.existsSync(path.join(t.dataDir, 'storage', row.storage_key))).toBe(false);
      expect(await activityActions(t, issue.id)).toContain('issue.attachment_deleted');
    });
  });

  describe('GET /api/issues/:issueId/heartbeat-context', () => {
    it('lists attachment summaries', async () => {
      const { c, issue } = await setup();
      const a = (await upload(t, c.id, issue.id, 'a.txt', 'text/plain', 'x').expect(201)).body;
      const ctx = (await t.http.get(`/api/issues/${issue.id}/heartbeat-context`).expect(200)).body;
      expect(ctx.attachments).toEqual([expect.objectContaining({ id: a.id, originalFilename: 'a.txt', contentPath: a.contentPath })]);
    });
  });

  describe('authenticated mode', () => {
    let s: TestApp;
    beforeAll(async () => {
      s = await createTestApp({ env: { SERVICE_DEPLOYMENT_MODE: 'authenticated' } });
    });
    afterAll(() => s.close());

    it('answers 401 without credentials on every attachment route', async () => {
      const c = await insertCompany(s);
      const a = await insertAgent(s, c.id);
      const issue = await createIssue(s, c.id, {}, a.token);
      const up = (await upload(s, c.id, issue.id, 'a.txt', 'text/plain', 'x', { headers: bearer(a.token) }).expect(201)).body;
      await upload(s, c.id, issue.id, 'a.txt', 'text/plain', 'x').expect(401);
      await s.http.get(`/api/issues/${issue.id}/attachments`).expect(401);
      await s.http.get(up.contentPath).expect(401);
      await s.http.delete(`/api/attachments/${up.id}`).expect(401);
    });
  });
});
