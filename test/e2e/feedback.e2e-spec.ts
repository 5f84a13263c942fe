import { randomUUID } from 'node:crypto';
import { createDoc } from '../support/documents';
import { bearer, createCompany } from '../support/factories';
import { insertAgent, insertRun, SqlAgent } from '../support/issues';
import { createTestApp, TestApp } from '../support/test-app';
import { auth, AUTHENTICATED, makeMember, ownedCompany } from '../support/users';

const traces = (companyId: string) => `/api/companies/${companyId}/feedback-traces`;

describe('feedback traces (local board)', () => {
  let t: TestApp;
  let companyId: string;
  let projectId: string;
  let issueA: string;
  let issueB: string;
  let commentId: string;
  let revisionId: string;
  let runId: string;
  let agent: SqlAgent;
  beforeAll(async () => {
    t = await createTestApp();
    companyId = (await createCompany(t)).id;
    projectId = (await t.http.post(`/api/companies/${companyId}/projects`).send({ name: 'Feedback project' }).expect(201)).body.id;
    issueA = (await t.http.post(`/api/companies/${companyId}/issues`).send({ title: 'In project', projectId }).expect(201)).body.id;
    issueB = (await t.http.post(`/api/companies/${companyId}/issues`).send({ title: 'No project' }).expect(201)).body.id;
    agent = await insertAgent(t, companyId);
    commentId = (
      await t.http.post(`/api/issues/${issueA}/comments`).set(bearer(agent.token)).send({ body: 'the agent says hi' }).expect(201)
    ).body.id;
    revisionId = (await createDoc(t, issueA, 'plan', '# The plan\nstep one')).id;
    runId = await insertRun(t, agent, 'succeeded', { issueId: issueB });
  });
  afterAll(() => t.close());

  it("records a vote (201), replaces the caller's vote on a re-vote (200), and writes activity", async () => {
    const first = await t.http
      .post(traces(companyId))
      .send({ targetType: 'comment', targetId: commentId, vote: 'up', note: 'nice' })
      .expect(201);
    expect(first.body).toMatchObject({
      companyId,
      targetType: 'comment',
      targetId: commentId,
      vote: 'up',
      note: 'nice',
      status: 'local',
      issueId: issueA,
      projectId,
      agentId: agent.id,
    });
    const again = await t.http
      .post(traces(companyId))
      .send({ targetType: 'comment', targetId: commentId, vote: 'down', note: null })
      .expect(200);
    expect(again.body).toMatchObject({ id: first.body.id, vote: 'down', note: null });
    const list = await t.http.get(traces(companyId)).expect(200);
    expect(list.body.filter((x: { targetId: string }) => x.targetId === commentId)).toHaveLength(1);
    const [act] = await t.dataSource.query(
      `SELECT action, details FROM activity_log WHERE company_id = $1 AND action = 'feedback.voted' ORDER BY created_at DESC LIMIT 1`,
      [companyId],
    );
    expect(act.details).toMatchObject({ targetType: 'comment', vote: 'down' });
  });

  it('votes on a document revision and a run', async () => {
    const rev = await t.http
      .post(traces(companyId))
      .send({ targetType: 'document_revision', targetId: revisionId, vote: 'up' })
      .expect(201);
    expect(rev.body).toMatchObject({ issueId: issueA, projectId });
    const run = await t.http
      .post(traces(companyId))
      .send({ targetType: 'run', targetId: runId, vote: 'down', note: 'wrong file' })
      .expect(201);
    expect(run.body).toMatchObject({ issueId: issueB, projectId: null, runId, agentId: agent.id });
  });

  it('refuses targets of another company or unknown ones (422) and bad bodies (400)', async () => {
    const other = await createCompany(t);
    const otherIssue = (await t.http.post(`/api/companies/${other.id}/issues`).send({ title: 'x' }).expect(201)).body.id;
    const otherComment = (await t.http.post(`/api/issues/${otherIssue}/comments`).send({ body: 'elsewhere' }).expect(201)).body.id;
    for (const body of [
      { targetType: 'comment', targetId: otherComment, vote: 'up' },
      { targetType: 'run', targetId: randomUUID(), vote: 'up' },
      { targetType: 'document_revision', targetId: commentId, vote: 'up' },
    ]) {
      const res = await t.http.post(traces(companyId)).send(body).expect(422);
      expect(res.body).toMatchObject({ code: 'invalid_reference', field: 'targetId' });
    }
    for (const body of [
      {},
      { targetType: 'issue', targetId: commentId, vote: 'up' },
      { targetType: 'comment', targetId: 'nope', vote: 'up' },
      { targetType: 'comment', targetId: commentId, vote: 'meh' },
      { targetType: 'comment', targetId: commentId, vote: 'up', note: 'x'.repeat(4001) },
    ]) {
      await t.http.post(traces(companyId)).send(body).expect(400);
    }
    for (const q of [
      'targetType=issue',
      'vote=sideways',
      'status=bogus',
      'issueId=1',
      'projectId=x',
      'from=yesterday',
      'to=2026-13-01',
      'sharedOnly=maybe',
      'includePayload=2',
    ]) {
      await t.http.get(`${traces(companyId)}?${q}`).expect(400);
    }
  });

  it('refuses agent callers on both routes (403)', async () => {
    await t.http.get(traces(companyId)).set(bearer(agent.token)).expect(403);
    await t.http
      .post(traces(companyId))
      .set(bearer(agent.token))
      .send({ targetType: 'comment', targetId: commentId, vote: 'up' })
      .expect(403);
  });

  it('filters by targetType, vote, issueId, projectId, from and to', async () => {
    const ids = async (q: string) =>
      (await t.http.get(`${traces(companyId)}?${q}`).expect(200)).body.map((x: { targetType: string }) => x.targetType).sort();
    expect(await ids('')).toEqual(['comment', 'document_revision', 'run']);
    expect(await ids('targetType=run')).toEqual(['run']);
    expect(await ids('vote=down')).toEqual(['comment', 'run']);
    expect(await ids('vote=up')).toEqual(['document_revision']);
    expect(await ids(`issueId=${issueB}`)).toEqual(['run']);
    expect(await ids(`projectId=${projectId}`)).toEqual(['comment', 'document_revision']);
    expect(await ids(`projectId=${projectId}&vote=down`)).toEqual(['comment']);
    const future = new Date(Date.now() + 3600_000).toISOString();
    const past = new Date(Date.now() - 3600_000).toISOString();
    expect(await ids(`from=${future}`)).toEqual([]);
    expect(await ids(`from=${past}&to=${future}`)).toEqual(['comment', 'document_revision', 'run']);
    expect(await ids(`to=${past}`)).toEqual([]);
  });

  it('adds the rated content with includePayload', async () => {
    const plain = (await t.http.get(traces(companyId)).expect(200)).body;
    expect(plain.every((x: object) => !('payload' in x))).toBe(true);
    const full = (await t.http.get(`${traces(companyId)}?includePayload=true`).expect(200)).body as Array<{
      targetType: string;
      payload: Record<string, unknown>;
    }>;
    const by = Object.fromEntries(full.map((x) => [x.targetType, x.payload]));
    expect(by.comment).toMatchObject({ body: 'the agent says hi', authorAgentId: agent.id });
    expect(by.document_revision).toMatchObject({ documentKey: 'plan', revisionNumber: 1, body: '# The plan\nstep one' });
    expect(by.run).toMatchObject({ status: 'succeeded' });
  });

  it('company consent decides status and sharedOnly: not retroactive, withdrawn by turning it off', async () => {
    const before = (await t.http.get(`/api/companies/${companyId}`).expect(200)).body;
    expect(before).not.toHaveProperty('feedbackSharingEnabled');
    expect((await t.http.get(`${traces(companyId)}?sharedOnly=true`).expect(200)).body).toEqual([]);
    const on = await t.http.patch(`/api/companies/${companyId}`).send({ feedbackSharingEnabled: true }).expect(200);
    expect(on.body).toMatchObject({ feedbackSharingEnabled: true });
    expect(Date.parse(on.body.feedbackSharingConsentedAt)).toBeGreaterThan(0);
    expect(typeof on.body.feedbackSharingConsentedByUserId).toBe('string');
    // votes recorded before the consent stay local
    expect((await t.http.get(`${traces(companyId)}?sharedOnly=true`).expect(200)).body).toEqual([]);
    await new Promise((r) => setTimeout(r, 5));
    const fresh = await t.http.post(traces(companyId)).send({ targetType: 'run', targetId: runId, vote: 'up' }).expect(200);
    expect(fresh.body.status).toBe('shared');
    const shared = (await t.http.get(`${traces(companyId)}?sharedOnly=true`).expect(200)).body;
    expect(shared.map((x: { id: string }) => x.id)).toEqual([fresh.body.id]);
    expect((await t.http.get(`${traces(companyId)}?status=shared`).expect(200)).body).toHaveLength(1);
    expect((await t.http.get(`${traces(companyId)}?status=local`).expect(200)).body).toHaveLength(2);
    expect((await t.http.get(`${traces(companyId)}?status=local&sharedOnly=true`).expect(200)).body).toEqual([]);
    // a company-scoped patch of other fields keeps the consent
    await t.http.patch(`/api/companies/${companyId}`).send({ description: 'x' }).expect(200);
    expect((await t.http.get(`${traces(companyId)}?sharedOnly=true`).expect(200)).body).toHaveLength(1);
    const off = await t.http.patch(`/api/companies/${companyId}`).send({ feedbackSharingEnabled: false }).expect(200);
    expect(off.body).toMatchObject({ feedbackSharingEnabled: false, feedbackSharingConsentedAt: null });
    expect((await t.http.get(`${traces(companyId)}?sharedOnly=true`).expect(200)).body).toEqual([]);
    await t.http.patch(`/api/companies/${companyId}`).send({ feedbackSharingEnabled: 'yes' }).expect(400);
    await t.http.patch(`/api/companies/${companyId}`).send({ feedbackSharingEnabled: null }).expect(400);
  });

  it('a CEO agent may not change the consent (branding fields only)', async () => {
    const [ceo] = await t.dataSource.query(`UPDATE agents SET role = 'ceo' WHERE id = $1 RETURNING id`, [agent.id]);
    expect(ceo).toBeDefined();
    await t.http.patch(`/api/companies/${companyId}`).set(bearer(agent.token)).send({ feedbackSharingEnabled: true }).expect(403);
  });
});

describe('feedback traces (authenticated mode)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: AUTHENTICATED });
  });
  afterAll(() => t.close());

  it('401 without credentials; 403 for a user of another company; members vote and read', async () => {
    const { company, owner } = await ownedCompany(t);
    const other = await ownedCompany(t);
    await t.http.get(traces(company.id)).expect(401);
    await t.http.post(traces(company.id)).send({ targetType: 'run', targetId: randomUUID(), vote: 'up' }).expect(401);
    await t.http.get(traces(company.id)).set(auth(other.owner.token)).expect(403);
    await t.http
      .post(traces(company.id))
      .set(auth(other.owner.token))
      .send({ targetType: 'run', targetId: randomUUID(), vote: 'up' })
      .expect(403);
    const issue = (await t.http.post(`/api/companies/${company.id}/issues`).set(auth(owner.token)).send({ title: 'x' }).expect(201)).body
      .id;
    const comment = (await t.http.post(`/api/issues/${issue}/comments`).set(auth(owner.token)).send({ body: 'hello' }).expect(201)).body.id;
    const member = await makeMember(t, company.id);
    const a = await t.http
      .post(traces(company.id))
      .set(auth(owner.token))
      .send({ targetType: 'comment', targetId: comment, vote: 'up' })
      .expect(201);
    const b = await t.http
      .post(traces(company.id))
      .set(auth(member.token))
      .send({ targetType: 'comment', targetId: comment, vote: 'down' })
      .expect(201);
    expect(a.body.voterUserId).toBe(owner.id);
    expect(b.body.voterUserId).toBe(member.id);
    expect((await t.http.get(traces(company.id)).set(auth(member.token)).expect(200)).body).toHaveLength(2);
  });
});
