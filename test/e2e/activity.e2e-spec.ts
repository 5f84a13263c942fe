import { randomUUID } from 'node:crypto';
import { createCompany } from '../support/factories';
import { createTestApp, TestApp } from '../support/test-app';

describe('activity', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  describe('POST /api/companies/:companyId/activity', () => {
    it('appends a record with actorType defaulting to system', async () => {
      const c = await createCompany(t);
      const res = await t.http
        .post(`/api/companies/${c.id}/activity`)
        .send({ actorId: 'cron', action: 'custom.thing', entityType: 'widget', entityId: 'w1', details: { n: 1 } })
        .expect(201);
      expect(res.body).toMatchObject({
        companyId: c.id,
        actorType: 'system',
        actorId: 'cron',
        action: 'custom.thing',
        entityType: 'widget',
        entityId: 'w1',
        agentId: null,
        details: { n: 1 },
      });
    });

    it('sanitises details: secret values, tokens and key hashes never stored', async () => {
      const c = await createCompany(t);
      const token = 'svc_ak_' + 'x'.repeat(43);
      const res = await t.http
        .post(`/api/companies/${c.id}/activity`)
        .send({
          actorId: 'x',
          action: 'a',
          entityType: 'e',
          entityId: '1',
          details: {
            password: 'hunter2',
            apiKey: 'k',
            nested: { runToken: 'eyJa.b.c', keyHash: 'abc', note: token },
            secretId: 's1',
            env: { OPENAI_KEY: 'sk-live' },
          },
        })
        .expect(201);
      const stored = JSON.stringify((await t.dataSource.query(`SELECT details FROM activity_log WHERE id = $1`, [res.body.id]))[0].details);
      for (const leaked of ['hunter2', '"k"', 'eyJa.b.c', '"abc"', token, 'sk-live']) expect(stored).not.toContain(leaked);
      expect(stored).toContain('s1');
      expect(stored).toContain('OPENAI_KEY');
    });

    it('validates required fields', async () => {
      const c = await createCompany(t);
      const res = await t.http.post(`/api/companies/${c.id}/activity`).send({ action: 'a' }).expect(400);
      expect(res.body.fields.map((f: { field: string }) => f.field)).toEqual(expect.arrayContaining(['actorId', 'entityType', 'entityId']));
      await t.http
        .post(`/api/companies/${c.id}/activity`)
        .send({ actorId: 'x', action: 'a', entityType: 'e', entityId: '1', agentId: 'nope' })
        .expect(400);
    });

    it('answers 404 for an unknown company', async () => {
      await t.http
        .post(`/api/companies/${randomUUID()}/activity`)
        .send({ actorId: 'x', action: 'a', entityType: 'e', entityId: '1' })
        .expect(404);
    });
  });

  describe('GET /api/companies/:companyId/activity', () => {
    it('lists newest first with exact-match filters', async () => {
      const c = await createCompany(t);
      for (const [type, id] of [
        ['widget', 'w1'],
        ['widget', 'w2'],
        ['gadget', 'w1'],
      ]) {
        await t.http
          .post(`/api/companies/${c.id}/activity`)
          .send({ actorId: 'x', action: 'made', entityType: type, entityId: id })
          .expect(201);
      }
      const all = (await t.http.get(`/api/companies/${c.id}/activity`).expect(200)).body;
      const times = all.map((a: { createdAt: string }) => Date.parse(a.createdAt));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
      const widgets = (await t.http.get(`/api/companies/${c.id}/activity?entityType=widget`).expect(200)).body;
      expect(widgets).toHaveLength(2);
      const w1 = (await t.http.get(`/api/companies/${c.id}/activity?entityType=widget&entityId=w1`).expect(200)).body;
      expect(w1).toHaveLength(1);
      const partial = (await t.http.get(`/api/companies/${c.id}/activity?entityType=widg`).expect(200)).body;
      expect(partial).toHaveLength(0);
    });

    it('never lets records be updated', async () => {
      const c = await createCompany(t);
      const rec = (await t.http.post(`/api/companies/${c.id}/activity`).send({ actorId: 'x', action: 'a', entityType: 'e', entityId: '1' }))
        .body;
      await expect(t.dataSource.query(`UPDATE activity_log SET action = 'changed' WHERE id = $1`, [rec.id])).rejects.toThrow(/append-only/);
    });
  });
});
