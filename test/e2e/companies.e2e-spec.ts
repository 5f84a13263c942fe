import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createCompany } from '../support/factories';
import { createTestApp, TestApp } from '../support/test-app';

const PNG_1PX = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

describe('companies', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SERVICE_MAX_UPLOAD_BYTES: '4096' } });
  });
  afterAll(() => t.close());

  const uploadLogo = (companyId: string, data: Buffer | string, type = 'image/png', filename = 'logo.png') =>
    t.http.post(`/api/companies/${companyId}/logo`).attach('file', Buffer.from(data), { filename, contentType: type });

  describe('POST /api/companies', () => {
    it('creates a company with the spec fields and a generated issue prefix', async () => {
      const res = await t.http.post('/api/companies').send({ name: 'Zebra Works', description: 'plain' }).expect(201);
      expect(res.body).toMatchObject({
        name: 'Zebra Works',
        description: 'plain',
        status: 'active',
        issueCounter: 1,
        budgetMonthlyCents: 0,
        spentMonthlyCents: 0,
        requireBoardApprovalForNewAgents: false,
        logoAssetId: null,
        logoUrl: null,
      });
      expect(res.body.issuePrefix).toMatch(/^ZEB\d*$/);
      expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
    });

    it('keeps issue prefixes unique under 20 concurrent creates with the same name', async () => {
      const results = await Promise.all(Array.from({ length: 20 }, () => t.http.post('/api/companies').send({ name: 'Quokka Labs' })));
      expect(results.filter((r) => r.status !== 201).map((r) => r.body)).toEqual([]);
      const prefixes = results.map((r) => r.body.issuePrefix);
      expect(new Set(prefixes).size).toBe(20);
      expect(prefixes.every((p: string) => /^QUO\d*$/.test(p))).toBe(true);
    });

    it('requires a name', async () => {
      await t.http.post('/api/companies').send({}).expect(400);
      await t.http.post('/api/companies').send({ name: '' }).expect(400);
    });

    it('creates a calendar-month budget policy when budgetMonthlyCents > 0', async () => {
      const c = await createCompany(t, { budgetMonthlyCents: 5000 });
      const rows = await t.dataSource.query(`SELECT * FROM budget_policies WHERE company_id = $1`, [c.id]);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        scope_type: 'company',
        scope_id: c.id,
        amount: 5000,
        window_kind: 'calendar_month_utc',
        metric: 'billed_cents',
        warn_percent: 80,
      });
      const none = await createCompany(t);
      expect(await t.dataSource.query(`SELECT * FROM budget_policies WHERE company_id = $1`, [none.id])).toHaveLength(0);
    });

    it('writes a company.created activity record', async () => {
      const c = await createCompany(t);
      const res = await t.http.get(`/api/companies/${c.id}/activity`).expect(200);
      expect(res.body.map((a: { action: string }) => a.action)).toContain('company.created');
    });
  });

  describe('GET /api/companies, /stats, /:companyId', () => {
    it('lists companies and returns one by id', async () => {
      const c = await createCompany(t);
      const list = await t.http.get('/api/companies').expect(200);
      expect(list.body.some((x: { id: string }) => x.id === c.id)).toBe(true);
      const one = await t.http.get(`/api/companies/${c.id}`).expect(200);
      expect(one.body.issuePrefix).toBe(c.issuePrefix);
    });

    it('answers 404 for an unknown or malformed id', async () => {
      await t.http.get(`/api/companies/${randomUUID()}`).expect(404);
      await t.http.get(`/api/companies/not-a-uuid`).expect(404);
    });

    it('keys stats by company id', async () => {
      const c = await createCompany(t);
      const res = await t.http.get('/api/companies/stats').expect(200);
      expect(res.body[c.id]).toEqual({ agentCount: 0, issueCount: 0 });
    });
  });

  describe('PATCH /api/companies/:companyId', () => {
    it('changes given fields only', async () => {
      const c = await createCompany(t, { description: 'first' });
      const res = await t.http.patch(`/api/companies/${c.id}`).send({ budgetMonthlyCents: 700, brandColor: '#AABBCC' }).expect(200);
      expect(res.body).toMatchObject({ description: 'first', budgetMonthlyCents: 700, brandColor: '#aabbcc', name: c.name });
      const [policy] = await t.dataSource.query(`SELECT amount FROM budget_policies WHERE company_id = $1`, [c.id]);
      expect(policy.amount).toBe(700);
    });

    it('validates brandColor as #rrggbb and status values', async () => {
      const c = await createCompany(t);
      await t.http.patch(`/api/companies/${c.id}`).send({ brandColor: 'red' }).expect(400);
      await t.http.patch(`/api/companies/${c.id}`).send({ status: 'gone' }).expect(400);
    });

    it('pauses and resumes a company through status', async () => {
      const c = await createCompany(t);
      const p = await t.http.patch(`/api/companies/${c.id}`).send({ status: 'paused' }).expect(200);
      expect(p.body).toMatchObject({ status: 'paused', pauseReason: 'manual' });
      const a = await t.http.patch(`/api/companies/${c.id}`).send({ status: 'active' }).expect(200);
      expect(a.body).toMatchObject({ status: 'active', pauseReason: null });
    });
  });

  describe('POST /api/companies/:companyId/archive', () => {
    it('archives, pauses active agents with reason company_archived, and drops it from the default list', async () => {
      const c = await createCompany(t);
      const [agent] = await t.dataSource.query(
        `INSERT INTO agents (company_id, name, url_key, adapter_type, status) VALUES ($1, 'A', 'a', 'process', 'idle') RETURNING id`,
        [c.id],
      );
      const res = await t.http.post(`/api/companies/${c.id}/archive`).expect(200);
      expect(res.body.status).toBe('archived');
      const [row] = await t.dataSource.query(`SELECT status, pause_reason FROM agents WHERE id = $1`, [agent.id]);
      expect(row).toEqual({ status: 'paused', pause_reason: 'company_archived' });
      const list = await t.http.get('/api/companies').expect(200);
      expect(list.body.some((x: { id: string }) => x.id === c.id)).toBe(false);
      const all = await t.http.get('/api/companies?includeArchived=true').expect(200);
      expect(all.body.some((x: { id: string }) => x.id === c.id)).toBe(true);
    });
  });

  describe('DELETE /api/companies/:companyId', () => {
    it('is refused while company deletion is disabled', async () => {
      const c = await createCompany(t);
      const res = await t.http.delete(`/api/companies/${c.id}`).expect(403);
      expect(res.body.code).toBe('company_deletion_disabled');
      await t.http.get(`/api/companies/${c.id}`).expect(200);
    });
  });

  describe('logo and branding', () => {
    it('stores a PNG logo as an asset without attaching it', async () => {
      const c = await createCompany(t);
      const res = await uploadLogo(c.id, PNG_1PX).expect(201);
      expect(res.body.contentPath).toBe(`/api/assets/${res.body.assetId}/content`);
      const content = await t.http.get(res.body.contentPath).expect(200);
      expect(content.headers['content-type']).toBe('image/png');
      expect(Buffer.compare(content.body as Buffer, PNG_1PX)).toBe(0);
      const got = await t.http.get(`/api/companies/${c.id}`).expect(200);
      expect(got.body.logoAssetId).toBeNull();
    });

    it('sanitises SVG: scripts, handlers and external links stripped; served with a sandboxing CSP', async () => {
      const c = await createCompany(t);
      const svg =
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><script>alert(1)</script>' +
        '<rect width="10" height="10" onclick="alert(2)" fill="red"/><a href="https://evil.example"><circle r="2"/></a>' +
        '<image href="https://evil.example/x.png"/></svg>';
      const res = await uploadLogo(c.id, svg, 'image/svg+xml', 'logo.svg').expect(201);
      const content = await t.http
        .get(res.body.contentPath)
        .buffer(true)
        .parse((r, cb) => {
          let d = '';
          r.on('data', (x: Buffer) => (d += x.toString()));
          r.on('end', () => cb(null, d));
        });
      const text = content.body as string;
      expect(text).toContain('<rect');
      expect(text).toContain('viewBox');
      expect(text).not.toMatch(/script|onclick|evil\.example|alert/);
      expect(content.headers['content-security-policy']).toContain('sandbox');
    });

    it('rejects an empty or unsafe SVG, an empty file, a wrong type, an oversize file and two files', async () => {
      const c = await createCompany(t);
      await uploadLogo(c.id, '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', 'image/svg+xml', 'x.svg').expect(
        422,
      );
      await uploadLogo(c.id, Buffer.alloc(0)).expect(400);
      await uploadLogo(c.id, 'hello', 'text/plain', 'x.txt').expect(415);
      await uploadLogo(c.id, Buffer.alloc(5000, 1)).expect(413);
      await t.http
        .post(`/api/companies/${c.id}/logo`)
        .attach('file', PNG_1PX, { filename: 'a.png', contentType: 'image/png' })
        .attach('file', PNG_1PX, { filename: 'b.png', contentType: 'image/png' })
        .expect(400);
      await t.http.post(`/api/companies/${c.id}/logo`).send({ file: 'x' }).expect(400);
    });

    it('sets logoAssetId and derives logoUrl; replacing the logo removes the previous asset', async () => {
      const c = await createCompany(t);
      const first = (await uploadLogo(c.id, PNG_1PX).expect(201)).body;
      const set = await t.http.patch(`/api/companies/${c.id}/branding`).send({ logoAssetId: first.assetId }).expect(200);
      expect(set.body).toMatchObject({ logoAssetId: first.assetId, logoUrl: `/api/assets/${first.assetId}/content` });
      const second = (await uploadLogo(c.id, PNG_1PX).expect(201)).body;
      await t.http.patch(`/api/companies/${c.id}/branding`).send({ logoAssetId: second.assetId }).expect(200);
      await t.http.get(first.contentPath).expect(404);
      const [row] = await t.dataSource.query(`SELECT storage_key FROM assets WHERE id = $1`, [second.assetId]);
      await t.http.patch(`/api/companies/${c.id}/branding`).send({ logoAssetId: null }).expect(200);
      await t.http.get(second.contentPath).expect(404);
      // the bytes go too, once the transaction has committed
      await new Promise((r) => setTimeout(r, 100));
      expect(fs.existsSync(path.join(t.dataDir, 'storage', row.storage_key))).toBe(false);
    });

    it('refuses a logoAssetId of another company with 422 and leaves the logo unchanged', async () => {
      const [a, b] = [await createCompany(t), await createCompany(t)];
      const foreign = (await uploadLogo(b.id, PNG_1PX).expect(201)).body;
      const res = await t.http.patch(`/api/companies/${a.id}/branding`).send({ logoAssetId: foreign.assetId }).expect(422);
      expect(res.body).toMatchObject({ code: 'invalid_reference', field: 'logoAssetId' });
      expect((await t.http.get(`/api/companies/${a.id}`)).body.logoAssetId).toBeNull();
    });

    it('rolls the whole mutation back when a later step fails', async () => {
      const c = await createCompany(t);
      await t.http.patch(`/api/companies/${c.id}/branding`).send({ name: 'Changed', logoAssetId: randomUUID() }).expect(422);
      expect((await t.http.get(`/api/companies/${c.id}`)).body.name).toBe(c.name);
    });
  });
});

describe('companies with deletion enabled', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SERVICE_ENABLE_COMPANY_DELETION: 'true' } });
  });
  afterAll(() => t.close());

  it('hard-deletes the company and returns the deleted row', async () => {
    const c = await createCompany(t);
    const res = await t.http.delete(`/api/companies/${c.id}`).expect(200);
    expect(res.body.id).toBe(c.id);
    await t.http.get(`/api/companies/${c.id}`).expect(404);
    expect(await t.dataSource.query(`SELECT 1 FROM activity_log WHERE company_id = $1`, [c.id])).toHaveLength(0);
  });
});
