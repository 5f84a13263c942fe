import { randomUUID } from 'node:crypto';
import { bearer, createCompany } from '../support/factories';
import { createIssue, insertAgent } from '../support/issues';
import { createTestApp, TestApp } from '../support/test-app';

describe('labels', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const base = (companyId: string) => `/api/companies/${companyId}/labels`;

  describe('POST /api/companies/:companyId/labels', () => {
    it('creates a label; names are unique per company case-insensitively (409); bad input 400', async () => {
      const c = await createCompany(t);
      const res = await t.http.post(base(c.id)).send({ name: 'Bug', color: '#AA0000' }).expect(201);
      expect(res.body).toMatchObject({ companyId: c.id, name: 'Bug', color: '#aa0000' });
      expect((await t.http.post(base(c.id)).send({ name: 'bug' }).expect(409)).body.code).toBe('label_name_taken');
      await t.http
        .post(base((await createCompany(t)).id))
        .send({ name: 'Bug' })
        .expect(201);
      for (const body of [{}, { name: '' }, { name: 'x', color: 'red' }]) await t.http.post(base(c.id)).send(body).expect(400);
      expect((await t.http.get(base(c.id)).expect(200)).body.map((l: { name: string }) => l.name)).toEqual(['Bug']);
    });

    it('is company-scoped: 404 unknown company, 403 agent of another company; agents of the company may create', async () => {
      await t.http.post(base(randomUUID())).send({ name: 'x' }).expect(404);
      const c = await createCompany(t);
      const stranger = await insertAgent(t, (await createCompany(t)).id);
      await t.http.post(base(c.id)).set(bearer(stranger.token)).send({ name: 'x' }).expect(403);
      await t.http.get(base(c.id)).set(bearer(stranger.token)).expect(403);
      const member = await insertAgent(t, c.id);
      await t.http.post(base(c.id)).set(bearer(member.token)).send({ name: 'agent-made' }).expect(201);
    });
  });

  describe('PATCH and DELETE /api/companies/:companyId/labels/:labelId', () => {
    it('renames and recolors; rename collision 409; unknown or foreign label 404', async () => {
      const c = await createCompany(t);
      const a = (await t.http.post(base(c.id)).send({ name: 'A', color: '#000000' }).expect(201)).body;
      await t.http.post(base(c.id)).send({ name: 'B' }).expect(201);
      expect(
        (
          await t.http
            .patch(`${base(c.id)}/${a.id}`)
            .send({ name: 'A2' })
            .expect(200)
        ).body,
      ).toMatchObject({ name: 'A2', color: '#000000' });
      expect(
        (
          await t.http
            .patch(`${base(c.id)}/${a.id}`)
            .send({ color: null })
            .expect(200)
        ).body.color,
      ).toBeNull();
      await t.http
        .patch(`${base(c.id)}/${a.id}`)
        .send({ name: 'b' })
        .expect(409);
      await t.http
        .patch(`${base(c.id)}/${randomUUID()}`)
        .send({ name: 'z' })
        .expect(404);
      const other = await createCompany(t);
      await t.http
        .patch(`${base(other.id)}/${a.id}`)
        .send({ name: 'z' })
        .expect(404);
      await t.http.delete(`${base(other.id)}/${a.id}`).expect(404);
    });

    it('delete detaches the label from issues and records label.deleted', async () => {
      const c = await createCompany(t);
      const l = (await t.http.post(base(c.id)).send({ name: 'Temp' }).expect(201)).body;
      const issue = await createIssue(t, c.id, { labelIds: [l.id] });
      expect(issue.labelIds).toEqual([l.id]);
      expect((await t.http.delete(`${base(c.id)}/${l.id}`).expect(200)).body.id).toBe(l.id);
      expect((await t.http.get(`/api/issues/${issue.id}`).expect(200)).body.labelIds).toEqual([]);
      const feed = (await t.http.get(`/api/companies/${c.id}/activity?entityType=label`).expect(200)).body.map(
        (x: { action: string }) => x.action,
      );
      expect(feed).toEqual(['label.deleted', 'label.created']);
    });

    it('PATCH issue labelIds replaces the set', async () => {
      const c = await createCompany(t);
      const [x, y] = [(await t.http.post(base(c.id)).send({ name: 'x' })).body, (await t.http.post(base(c.id)).send({ name: 'y' })).body];
      const issue = await createIssue(t, c.id, { labelIds: [x.id] });
      expect(
        (
          await t.http
            .patch(`/api/issues/${issue.id}`)
            .send({ labelIds: [y.id] })
            .expect(200)
        ).body.labels,
      ).toEqual([{ id: y.id, name: 'y', color: null }]);
      expect((await t.http.patch(`/api/issues/${issue.id}`).send({ labelIds: [] }).expect(200)).body.labelIds).toEqual([]);
    });
  });
});
