import { randomUUID } from 'node:crypto';
import { createAgent, createAgentWithKey } from '../support/agents';
import { bearer, createCompany, uniq } from '../support/factories';
import { activityOf, describeWithoutCredentials } from '../support/projects';
import { createSkill } from '../support/skills';
import { createTestApp, TestApp } from '../support/test-app';
import { auth, AUTHENTICATED, makeMember, ownedCompany } from '../support/users';

type Rec = Record<string, any>;

describe('folders of routines and skills', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const base = (companyId: string) => `/api/companies/${companyId}/folders`;

  async function folder(companyId: string, body: Rec): Promise<Rec> {
    const res = await t.http.post(base(companyId)).send(body);
    if (res.status !== 201) throw new Error(`create folder: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async function list(companyId: string, kind: 'routine' | 'skill'): Promise<Rec> {
    return (await t.http.get(`${base(companyId)}?kind=${kind}`).expect(200)).body;
  }

  async function routine(companyId: string, agentId: string, extra: Rec = {}): Promise<Rec> {
    const res = await t.http
      .post(`/api/companies/${companyId}/routines`)
      .send({ title: uniq('Routine'), assigneeAgentId: agentId, ...extra });
    if (res.status !== 201) throw new Error(`routine: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  it('creates nested folders with paths and depths, lists them parents first with item counts', async () => {
    const c = await createCompany(t);
    const agent = await createAgent(t, c.id);
    const ops = await folder(c.id, { kind: 'routine', name: '  Operations ', color: 'emerald' });
    expect(ops).toMatchObject({
      kind: 'routine',
      name: 'Operations',
      color: 'emerald',
      parentId: null,
      path: 'Operations',
      depth: 0,
      itemCount: 0,
    });
    const daily = await folder(c.id, { kind: 'routine', name: 'Daily', parentId: ops.id });
    expect(daily).toMatchObject({ parentId: ops.id, path: 'Operations/Daily', depth: 1, ownerUserId: null, systemKey: null });

    const r1 = await routine(c.id, agent.id, { folderId: daily.id });
    expect(r1.folderId).toBe(daily.id);
    await routine(c.id, agent.id);
    await routine(c.id, agent.id);

    const l = await list(c.id, 'routine');
    expect(l.allCount).toBe(3);
    expect(l.unfiledCount).toBe(2);
    expect(l.folders.map((f: Rec) => f.path)).toEqual(['Operations', 'Operations/Daily']);
    expect(l.folders.find((f: Rec) => f.id === daily.id).itemCount).toBe(1);
    // skill folders are another tree
    expect((await list(c.id, 'skill')).folders).toEqual([]);
    expect((await t.http.get(`/api/routines/${r1.id}`).expect(200)).body.folderId).toBe(daily.id);
  });

  it('names are unique among siblings (409), blank or unknown kinds are 400', async () => {
    const c = await createCompany(t);
    const a = await folder(c.id, { kind: 'skill', name: 'Writing' });
    const dup = await t.http.post(base(c.id)).send({ kind: 'skill', name: 'writing' }).expect(409);
    expect(dup.body).toMatchObject({ code: 'folder_name_taken' });
    // same name elsewhere is fine: another parent, or the other kind
    await folder(c.id, { kind: 'skill', name: 'Writing', parentId: a.id });
    await folder(c.id, { kind: 'routine', name: 'Writing' });
    await t.http.post(base(c.id)).send({ kind: 'skill', name: '   ' }).expect(400);
    await t.http.post(base(c.id)).send({ kind: 'doc', name: 'x' }).expect(400);
    await t.http.get(`${base(c.id)}?kind=doc`).expect(400);
    await t.http.get(base(c.id)).expect(400);
    await t.http.post(base(c.id)).send({ kind: 'skill', name: 'x', color: 'chartreuse' }).expect(400);
    const renamed = await t.http
      .patch(`${base(c.id)}/${a.id}`)
      .send({ name: 'Prose', color: 'amber' })
      .expect(200);
    expect(renamed.body).toMatchObject({ name: 'Prose', color: 'amber', path: 'Prose' });
    const other = await folder(c.id, { kind: 'skill', name: 'Other' });
    expect(
      (
        await t.http
          .patch(`${base(c.id)}/${other.id}`)
          .send({ name: 'PROSE' })
          .expect(409)
      ).body.code,
    ).toBe('folder_name_taken');
  });

  it('moves a folder with its subtree; refuses a move into itself or a descendant (422), or into the other kind (422)', async () => {
    const c = await createCompany(t);
    const a = await folder(c.id, { kind: 'skill', name: 'A' });
    const b = await folder(c.id, { kind: 'skill', name: 'B', parentId: a.id });
    const x = await folder(c.id, { kind: 'skill', name: 'X' });
    const r = await folder(c.id, { kind: 'routine', name: 'R' });

    const cycle = await t.http
      .post(`${base(c.id)}/${a.id}/move`)
      .send({ parentId: b.id })
      .expect(422);
    expect(cycle.body).toMatchObject({ code: 'folder_cycle', field: 'parentId' });
    await t.http
      .post(`${base(c.id)}/${a.id}/move`)
      .send({ parentId: a.id })
      .expect(422);
    expect(
      (
        await t.http
          .post(`${base(c.id)}/${a.id}/move`)
          .send({ parentId: r.id })
          .expect(422)
      ).body.code,
    ).toBe('folder_kind_mismatch');
    expect(
      (
        await t.http
          .post(`${base(c.id)}/${a.id}/move`)
          .send({ parentId: randomUUID() })
          .expect(422)
      ).body.code,
    ).toBe('invalid_reference');

    const moved = await t.http
      .post(`${base(c.id)}/${a.id}/move`)
      .send({ parentId: x.id, position: 0 })
      .expect(200);
    expect(moved.body).toMatchObject({ id: a.id, parentId: x.id, path: 'X/A', depth: 1 });
    const paths = (await list(c.id, 'skill')).folders.map((f: Rec) => f.path);
    expect(paths).toEqual(['X', 'X/A', 'X/A/B']);

    // back to the root, first among the roots
    await t.http
      .post(`${base(c.id)}/${a.id}/move`)
      .send({ parentId: null, position: 0 })
      .expect(200);
    expect((await list(c.id, 'skill')).folders.map((f: Rec) => f.path)).toEqual(['A', 'A/B', 'X']);
  });

  it('files skills and routines, unfiles them, and refuses a folder of the other kind', async () => {
    const c = await createCompany(t);
    const agent = await createAgent(t, c.id);
    const skill = await createSkill(t, c.id, { name: uniq('skill') });
    const rt = await routine(c.id, agent.id);
    const sf = await folder(c.id, { kind: 'skill', name: 'Tools' });
    const rf = await folder(c.id, { kind: 'routine', name: 'Weekly' });

    const moved = await t.http
      .post(`${base(c.id)}/items/move`)
      .send({ kind: 'skill', itemId: skill.id, folderId: sf.id })
      .expect(200);
    expect(moved.body).toEqual({ kind: 'skill', itemId: skill.id, folderId: sf.id, companyId: c.id });
    const skills = (await t.http.get(`/api/companies/${c.id}/skills`).expect(200)).body as Rec[];
    expect(skills.find((s) => s.id === skill.id)).toMatchObject({ folderId: sf.id, folderPath: 'Tools' });
    expect((await list(c.id, 'skill')).folders[0].itemCount).toBe(1);

    const mismatch = await t.http
      .post(`${base(c.id)}/items/move`)
      .send({ kind: 'routine', itemId: rt.id, folderId: sf.id })
      .expect(422);
    expect(mismatch.body.code).toBe('folder_kind_mismatch');
    await t.http
      .post(`${base(c.id)}/items/move`)
      .send({ kind: 'routine', itemId: rt.id, folderId: rf.id })
      .expect(200);
    expect((await t.http.get(`/api/routines/${rt.id}`).expect(200)).body.folderId).toBe(rf.id);
    // a routine's own PATCH files it too, and null unfiles it
    await t.http.patch(`/api/routines/${rt.id}`).send({ folderId: null }).expect(200);
    expect((await list(c.id, 'routine')).unfiledCount).toBe(1);
    expect((await t.http.patch(`/api/routines/${rt.id}`).send({ folderId: sf.id }).expect(422)).body.code).toBe('folder_kind_mismatch');

    // an item the company does not have
    await t.http
      .post(`${base(c.id)}/items/move`)
      .send({ kind: 'skill', itemId: randomUUID(), folderId: sf.id })
      .expect(404);
    await t.http
      .post(`${base(c.id)}/items/move`)
      .send({ kind: 'skill', itemId: 'nope', folderId: sf.id })
      .expect(400);

    const entries = await activityOf(t, c.id, 'folder.item_moved');
    expect(entries.length).toBe(2);
  });

  it('deleting a folder deletes its subfolders and unfiles their items; nothing else is deleted', async () => {
    const c = await createCompany(t);
    const agent = await createAgent(t, c.id);
    const top = await folder(c.id, { kind: 'routine', name: 'Top' });
    const sub = await folder(c.id, { kind: 'routine', name: 'Sub', parentId: top.id });
    const keep = await folder(c.id, { kind: 'routine', name: 'Keep' });
    const r1 = await routine(c.id, agent.id, { folderId: top.id });
    const r2 = await routine(c.id, agent.id, { folderId: sub.id });
    const r3 = await routine(c.id, agent.id, { folderId: keep.id });

    const del = await t.http.delete(`${base(c.id)}/${top.id}`).expect(200);
    expect(new Set(del.body.deletedFolderIds)).toEqual(new Set([top.id, sub.id]));
    const l = await list(c.id, 'routine');
    expect(l.folders.map((f: Rec) => f.id)).toEqual([keep.id]);
    expect(l).toMatchObject({ allCount: 3, unfiledCount: 2 });
    for (const r of [r1, r2]) expect((await t.http.get(`/api/routines/${r.id}`).expect(200)).body.folderId).toBeNull();
    expect((await t.http.get(`/api/routines/${r3.id}`).expect(200)).body.folderId).toBe(keep.id);
    await t.http.delete(`${base(c.id)}/${top.id}`).expect(404);
    expect((await activityOf(t, c.id, 'folder.deleted')).length).toBe(1);
  });

  it('agents read folders but do not change them; another company sees none of them', async () => {
    const c = await createCompany(t);
    const other = await createCompany(t);
    const f = await folder(c.id, { kind: 'skill', name: 'Shared' });
    const agent = await createAgentWithKey(t, c.id);
    const seen = await t.http
      .get(`${base(c.id)}?kind=skill`)
      .set(bearer(agent.token))
      .expect(200);
    expect(seen.body.folders.map((x: Rec) => x.id)).toEqual([f.id]);
    await t.http.post(base(c.id)).set(bearer(agent.token)).send({ kind: 'skill', name: 'Mine' }).expect(403);
    await t.http
      .delete(`${base(c.id)}/${f.id}`)
      .set(bearer(agent.token))
      .expect(403);
    await t.http
      .post(`${base(c.id)}/ensure-my`)
      .set(bearer(agent.token))
      .send({})
      .expect(403);
    // the agent's key is not another company's
    await t.http
      .get(`${base(other.id)}?kind=skill`)
      .set(bearer(agent.token))
      .expect(403);
    // a folder id of another company: not found under this one, and not fileable there
    await t.http
      .patch(`${base(other.id)}/${f.id}`)
      .send({ name: 'x' })
      .expect(404);
    const foreignAgent = await createAgent(t, other.id);
    const res = await t.http
      .post(`/api/companies/${other.id}/routines`)
      .send({ title: 'x', assigneeAgentId: foreignAgent.id, folderId: f.id })
      .expect(422);
    expect(res.body).toMatchObject({ code: 'invalid_reference', field: 'folderId' });
  });

  describe('personal folders (two board users of one company)', () => {
    let a: TestApp;
    beforeAll(async () => {
      a = await createTestApp({ env: AUTHENTICATED });
    });
    afterAll(() => a.close());

    it('"My Skills" is created once per user, seen only by its owner, and what goes under it is personal', async () => {
      const { company, owner } = await ownedCompany(a);
      const member = await makeMember(a, company.id);
      const url = `/api/companies/${company.id}/folders`;

      const mine = await a.http.post(`${url}/ensure-my`).set(auth(owner.token)).send({}).expect(200);
      expect(mine.body).toMatchObject({ kind: 'skill', name: 'My Skills', systemKey: 'my', ownerUserId: owner.id, path: 'My Skills' });
      const again = await a.http.post(`${url}/ensure-my`).set(auth(owner.token)).send({ kind: 'skill' }).expect(200);
      expect(again.body.id).toBe(mine.body.id);
      const concurrent = await Promise.all(
        [1, 2, 3].map(() => a.http.post(`${url}/ensure-my`).set(auth(member.token)).send({ kind: 'routine' }).expect(200)),
      );
      expect(new Set(concurrent.map((r) => r.body.id)).size).toBe(1);
      expect(concurrent[0].body.name).toBe('My Routines');

      const drafts = await a.http
        .post(url)
        .set(auth(owner.token))
        .send({ kind: 'skill', name: 'Drafts', parentId: mine.body.id })
        .expect(201);
      expect(drafts.body).toMatchObject({ ownerUserId: owner.id, path: 'My Skills/Drafts' });
      const shared = await a.http.post(url).set(auth(member.token)).send({ kind: 'skill', name: 'Team' }).expect(201);

      const ownerView = (await a.http.get(`${url}?kind=skill`).set(auth(owner.token)).expect(200)).body.folders.map((f: Rec) => f.name);
      const memberView = (await a.http.get(`${url}?kind=skill`).set(auth(member.token)).expect(200)).body.folders.map((f: Rec) => f.name);
      expect(ownerView).toEqual(expect.arrayContaining(['My Skills', 'Drafts', 'Team']));
      expect(memberView).toEqual(['Team']);

      // the member cannot see, rename, move into, or delete the owner's personal folders
      await a.http.patch(`${url}/${drafts.body.id}`).set(auth(member.token)).send({ name: 'Mine now' }).expect(404);
      await a.http.delete(`${url}/${mine.body.id}`).set(auth(member.token)).expect(404);
      await a.http.post(`${url}/${shared.body.id}/move`).set(auth(member.token)).send({ parentId: drafts.body.id }).expect(422);

      // system folders keep their name and place, and are not deleted
      expect((await a.http.patch(`${url}/${mine.body.id}`).set(auth(owner.token)).send({ name: 'Stuff' }).expect(409)).body.code).toBe(
        'folder_system',
      );
      await a.http.post(`${url}/${mine.body.id}/move`).set(auth(owner.token)).send({ parentId: shared.body.id }).expect(409);
      await a.http.delete(`${url}/${mine.body.id}`).set(auth(owner.token)).expect(409);

      // a shared folder moved under "My Skills" becomes personal; moved out, shared again
      await a.http.post(`${url}/${shared.body.id}/move`).set(auth(owner.token)).send({ parentId: mine.body.id }).expect(200);
      expect((await a.http.get(`${url}?kind=skill`).set(auth(member.token)).expect(200)).body.folders).toEqual([]);
      await a.http.post(`${url}/${shared.body.id}/move`).set(auth(owner.token)).send({ parentId: null }).expect(200);
      expect((await a.http.get(`${url}?kind=skill`).set(auth(member.token)).expect(200)).body.folders.map((f: Rec) => f.name)).toEqual([
        'Team',
      ]);

      // personal folders stay out of the company's activity log; shared ones are in it
      const actions = ((await a.http.get(`/api/companies/${company.id}/activity`).set(auth(owner.token)).expect(200)).body as Rec[])
        .filter((r) => r.entityType === 'folder')
        .map((r) => `${r.action}:${r.details?.name}`);
      expect(actions).toEqual(expect.arrayContaining(['folder.created:Team']));
      expect(actions.some((x) => x.endsWith(':Drafts') || x.endsWith(':My Skills'))).toBe(false);
    });
  });

  describeWithoutCredentials([
    ['get', `/api/companies/${randomUUID()}/folders?kind=skill`],
    ['post', `/api/companies/${randomUUID()}/folders`, { kind: 'skill', name: 'x' }],
    ['post', `/api/companies/${randomUUID()}/folders/items/move`, { kind: 'skill', itemId: randomUUID(), folderId: null }],
  ]);
});
