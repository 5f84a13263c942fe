import { randomUUID } from 'node:crypto';
import { Clock } from '../../src/modules/budgets/clock.service';
import { RoutinesScheduler } from '../../src/modules/routines/routines.jobs';
import { createAgent, createRestrictedAgentWithKey } from '../support/agents';
import { bearer, createCompany, uniq } from '../support/factories';
import { wakeups } from '../support/issues';
import { activityOf, describeWithoutCredentials } from '../support/projects';
import { createTestApp, TestApp } from '../support/test-app';

type Rec = Record<string, any>;

/** The wall-clock time of an instant in a time zone, as `HH:MM`. */
const localTime = (isoTime: string, timeZone: string) =>
  new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(isoTime));

describe('routines', () => {
  let t: TestApp;
  let scheduler: RoutinesScheduler;
  beforeAll(async () => {
    t = await createTestApp();
    scheduler = t.app.get(RoutinesScheduler);
  });
  afterAll(() => t.close());

  async function setup() {
    const c = await createCompany(t);
    const agent = await createAgent(t, c.id);
    return { c, agent };
  }

  async function createRoutine(companyId: string, body: Rec): Promise<Rec> {
    const res = await t.http.post(`/api/companies/${companyId}/routines`).send({ title: uniq('Routine'), ...body });
    if (res.status !== 201) throw new Error(`createRoutine: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** Makes a routine's schedule triggers due at `at` (as if the time had come, or had long passed). */
  async function makeDue(routineId: string, at: Date = new Date(Date.now() - 1000)): Promise<void> {
    await t.dataSource.query(`UPDATE routine_triggers SET next_run_at = $2 WHERE routine_id = $1 AND kind = 'schedule'`, [routineId, at]);
  }

  const issuesOf = async (companyId: string, routineId: string): Promise<Rec[]> =>
    (await t.http.get(`/api/companies/${companyId}/issues?originId=${routineId}`).expect(200)).body;

  describe('POST /api/companies/:companyId/routines', () => {
    it('creates a routine with a cron trigger in a time zone; nextRunAt is the next local firing', async () => {
      const { c, agent } = await setup();
      const r = await createRoutine(c.id, {
        title: 'Daily brief',
        description: 'Write the daily brief.',
        assigneeAgentId: agent.id,
        triggers: [
          { kind: 'schedule', label: 'mornings', cronExpression: '0 9 * * *', timezone: 'Europe/Berlin' },
          { kind: 'schedule', cronExpression: '30 17 * * *', timezone: 'America/New_York' },
          { kind: 'manual', label: 'by hand' },
        ],
      });
      expect(r).toMatchObject({
        companyId: c.id,
        title: 'Daily brief',
        assigneeAgentId: agent.id,
        status: 'active',
        priority: 'medium',
        concurrencyPolicy: 'skip_if_active',
        catchUpPolicy: 'coalesce',
        lastRun: null,
        activeIssue: null,
        recentRuns: [],
        assignee: { id: agent.id, name: agent.name },
      });
      const [berlin, ny, manual] = r.triggers;
      expect(berlin).toMatchObject({
        kind: 'schedule',
        label: 'mornings',
        enabled: true,
        cronExpression: '0 9 * * *',
        timezone: 'Europe/Berlin',
      });
      expect(localTime(berlin.nextRunAt, 'Europe/Berlin')).toBe('09:00');
      expect(localTime(ny.nextRunAt, 'America/New_York')).toBe('17:30');
      for (const tr of [berlin, ny]) {
        expect(new Date(tr.nextRunAt).getTime()).toBeGreaterThan(Date.now());
        expect(new Date(tr.nextRunAt).getTime()).toBeLessThanOrEqual(Date.now() + 24 * 3600_000);
      }
      expect(manual).toMatchObject({ kind: 'manual', nextRunAt: null, cronExpression: null });
      const list = (await t.http.get(`/api/companies/${c.id}/routines`).expect(200)).body;
      expect(list.map((x: Rec) => x.id)).toEqual([r.id]);
      expect(list[0].triggers).toHaveLength(3);
      expect((await activityOf(t, c.id, 'routine.created')).map((a) => a.entityId)).toEqual([r.id]);
    });

    it('rejects bad input: 400 for missing fields, 422 for a bad cron, time zone or foreign reference', async () => {
      const { c, agent } = await setup();
      const other = await setup();
      const url = `/api/companies/${c.id}/routines`;
      await t.http.post(url).send({ assigneeAgentId: agent.id }).expect(400);
      await t.http.post(url).send({ title: 'x' }).expect(400);
      await t.http.post(url).send({ title: 'x', assigneeAgentId: 'nope' }).expect(400);
      await t.http.post(url).send({ title: 'x', assigneeAgentId: agent.id, concurrencyPolicy: 'sometimes' }).expect(400);
      await t.http
        .post(url)
        .send({ title: 'x', assigneeAgentId: agent.id, triggers: [{ kind: 'schedule' }] })
        .expect(400);
      await t.http
        .post(url)
        .send({ title: 'x', assigneeAgentId: agent.id, triggers: [{ kind: 'cronjob', cronExpression: '* * * * *' }] })
        .expect(400);
      const badCron = await t.http
        .post(url)
        .send({ title: 'x', assigneeAgentId: agent.id, triggers: [{ kind: 'schedule', cronExpression: '61 * * * *' }] })
        .expect(422);
      expect(badCron.body).toMatchObject({ code: 'invalid_cron_expression', field: 'triggers[0].cronExpression' });
      await t.http
        .post(url)
        .send({ title: 'x', assigneeAgentId: agent.id, triggers: [{ kind: 'schedule', cronExpression: '* * * *' }] })
        .expect(422);
      const badTz = await t.http
        .post(url)
        .send({
          title: 'x',
          assigneeAgentId: agent.id,
          triggers: [{ kind: 'schedule', cronExpression: '0 9 * * *', timezone: 'Mars/Olympus' }],
        })
        .expect(422);
      expect(badTz.body).toMatchObject({ code: 'invalid_timezone' });
      // another company's agent and project are foreign references
      const foreignAgent = await t.http.post(url).send({ title: 'x', assigneeAgentId: other.agent.id }).expect(422);
      expect(foreignAgent.body).toMatchObject({ code: 'invalid_reference', field: 'assigneeAgentId' });
      const foreignProject = (
        await t.http
          .post(`/api/companies/${other.c.id}/projects`)
          .send({ name: uniq('P') })
          .expect(201)
      ).body;
      const res = await t.http.post(url).send({ title: 'x', assigneeAgentId: agent.id, projectId: foreignProject.id }).expect(422);
      expect(res.body).toMatchObject({ code: 'invalid_reference', field: 'projectId' });
      expect((await t.http.get(`/api/companies/${c.id}/routines`).expect(200)).body).toEqual([]);
    });

    it('needs task-assignment authority over the assignee: an agent without it gets 403, a routine of another company 404 as an unknown one', async () => {
      const { c, agent } = await setup();
      const restricted = await createRestrictedAgentWithKey(t, c.id);
      const res = await t.http
        .post(`/api/companies/${c.id}/routines`)
        .set(bearer(restricted.token))
        .send({ title: 'x', assigneeAgentId: agent.id })
        .expect(403);
      expect(res.body.reason).toBeDefined();
      // an agent may give itself a routine
      await t.http
        .post(`/api/companies/${c.id}/routines`)
        .set(bearer(restricted.token))
        .send({ title: 'mine', assigneeAgentId: restricted.agent.id })
        .expect(201);
      const other = await setup();
      await t.http.get(`/api/companies/${other.c.id}/routines`).set(bearer(restricted.token)).expect(403);
      await t.http.get(`/api/companies/${randomUUID()}/routines`).expect(404);
      const r = await createRoutine(other.c.id, { assigneeAgentId: other.agent.id });
      await t.http.get(`/api/routines/${r.id}`).set(bearer(restricted.token)).expect(404);
      await t.http.post(`/api/routines/${r.id}/run`).set(bearer(restricted.token)).expect(404);
      await t.http.get(`/api/routines/${randomUUID()}`).expect(404);
      await t.http.get(`/api/routines/not-a-uuid`).expect(404);
    });
  });

  describe('POST /api/routines/:routineId/run', () => {
    it('creates an issue (originKind routine_execution, originId the routine) assigned to the agent, which is woken; 202', async () => {
      const { c, agent } = await setup();
      const r = await createRoutine(c.id, {
        title: 'Weekly review',
        description: 'Review the week.',
        assigneeAgentId: agent.id,
        priority: 'high',
      });
      const run = (await t.http.post(`/api/routines/${r.id}/run`).expect(202)).body;
      expect(run).toMatchObject({ routineId: r.id, source: 'manual', status: 'issue_created', triggerId: null, missedCount: 0 });
      const issue = (await t.http.get(`/api/issues/${run.linkedIssueId}`).expect(200)).body;
      expect(issue).toMatchObject({
        title: 'Weekly review',
        description: 'Review the week.',
        status: 'todo',
        priority: 'high',
        assigneeAgentId: agent.id,
        originKind: 'routine_execution',
        originId: r.id,
      });
      expect(run.linkedIssue).toMatchObject({ id: issue.id, identifier: issue.identifier, status: 'todo' });
      expect((await wakeups(t, agent.id)).filter((w) => w.issue_id === issue.id)).toEqual([
        expect.objectContaining({ source: 'assignment', reason: 'issue_assigned' }),
      ]);
      const detail = (await t.http.get(`/api/routines/${r.id}`).expect(200)).body;
      expect(detail.lastRun).toMatchObject({ id: run.id, linkedIssueId: issue.id });
      expect(detail.activeIssue).toMatchObject({ id: issue.id, identifier: issue.identifier });
      expect(detail.lastTriggeredAt).not.toBeNull();
      expect((await t.http.get(`/api/routines/${r.id}/runs`).expect(200)).body.map((x: Rec) => x.id)).toEqual([run.id]);
      expect((await activityOf(t, c.id, 'routine.run_requested'))[0]).toMatchObject({
        entityId: r.id,
        details: { runId: run.id, issueId: issue.id },
      });
    });

    it('issue lists leave routine executions out unless includeRoutineExecutions=true or originKind/originId is given', async () => {
      const { c, agent } = await setup();
      const r = await createRoutine(c.id, { assigneeAgentId: agent.id });
      const run = (await t.http.post(`/api/routines/${r.id}/run`).expect(202)).body;
      const plain = (await t.http.post(`/api/companies/${c.id}/issues`).send({ title: 'plain' }).expect(201)).body;
      const ids = async (q: string) =>
        (await t.http.get(`/api/companies/${c.id}/issues${q}`).expect(200)).body.map((i: Rec) => i.id).sort();
      expect(await ids('')).toEqual([plain.id]);
      expect(await ids('?includeRoutineExecutions=false')).toEqual([plain.id]);
      expect(await ids('?includeRoutineExecutions=true')).toEqual([plain.id, run.linkedIssueId].sort());
      expect(await ids('?originKind=routine_execution')).toEqual([run.linkedIssueId]);
      expect(await ids(`?originId=${r.id}`)).toEqual([run.linkedIssueId]);
    });

    it('skip_if_active: no second issue while the previous one is open; a new one once it is done', async () => {
      const { c, agent } = await setup();
      const r = await createRoutine(c.id, { assigneeAgentId: agent.id });
      const first = (await t.http.post(`/api/routines/${r.id}/run`).expect(202)).body;
      const second = (await t.http.post(`/api/routines/${r.id}/run`).expect(202)).body;
      expect(second).toMatchObject({ status: 'skipped', linkedIssueId: null, coalescedIntoRunId: first.id });
      expect(await issuesOf(c.id, r.id)).toHaveLength(1);
      await t.http.patch(`/api/issues/${first.linkedIssueId}`).send({ status: 'done' }).expect(200);
      const third = (await t.http.post(`/api/routines/${r.id}/run`).expect(202)).body;
      expect(third.status).toBe('issue_created');
      expect(await issuesOf(c.id, r.id)).toHaveLength(2);
      // the same rule holds for scheduled firings
      await t.http.post(`/api/routines/${r.id}/triggers`).send({ kind: 'schedule', cronExpression: '*/5 * * * *' }).expect(201);
      await makeDue(r.id);
      await scheduler.tick();
      const runs = (await t.http.get(`/api/routines/${r.id}/runs`).expect(200)).body;
      expect(runs[0]).toMatchObject({ source: 'schedule', status: 'skipped', coalescedIntoRunId: third.id });
      expect(await issuesOf(c.id, r.id)).toHaveLength(2);
    });

    it('an archived company creates no work: the execution is skipped', async () => {
      const { c, agent } = await setup();
      const r = await createRoutine(c.id, { assigneeAgentId: agent.id });
      await t.http.post(`/api/companies/${c.id}/archive`).expect(200);
      const run = (await t.http.post(`/api/routines/${r.id}/run`).expect(202)).body;
      expect(run).toMatchObject({ status: 'skipped', linkedIssueId: null, failureReason: 'the company is archived' });
      expect(await issuesOf(c.id, r.id)).toHaveLength(0);
    });

    it('always_create: one issue per firing even while earlier ones are open', async () => {
      const { c, agent } = await setup();
      const r = await createRoutine(c.id, { assigneeAgentId: agent.id, concurrencyPolicy: 'always_create' });
      for (let i = 0; i < 3; i++) expect((await t.http.post(`/api/routines/${r.id}/run`).expect(202)).body.status).toBe('issue_created');
      expect(await issuesOf(c.id, r.id)).toHaveLength(3);
    });

    it('fails the execution (no issue) when the assignee was terminated', async () => {
      const { c, agent } = await setup();
      const r = await createRoutine(c.id, { assigneeAgentId: agent.id });
      await t.http.post(`/api/agents/${agent.id}/terminate`).expect(200);
      const run = (await t.http.post(`/api/routines/${r.id}/run`).expect(202)).body;
      expect(run).toMatchObject({ status: 'failed', linkedIssueId: null, failureReason: 'assignee agent is terminated' });
      await t.http.patch(`/api/routines/${r.id}`).send({ assigneeAgentId: agent.id, title: 'x' }).expect(200);
      const fresh = await createAgent(t, c.id);
      await t.http.patch(`/api/routines/${r.id}`).send({ assigneeAgentId: fresh.id }).expect(200);
      expect((await t.http.post(`/api/routines/${r.id}/run`).expect(202)).body.status).toBe('issue_created');
    });
  });

  describe('the scheduler', () => {
    it('fires a due trigger once: an issue, the execution record, the next firing moved on, an activity record', async () => {
      const { c, agent } = await setup();
      const r = await createRoutine(c.id, {
        assigneeAgentId: agent.id,
        triggers: [{ kind: 'schedule', cronExpression: '0 9 * * *', timezone: 'Europe/Berlin' }],
      });
      const due = new Date(Date.now() - 2000);
      await makeDue(r.id, due);
      await scheduler.tick();
      await scheduler.tick();
      const issues = await issuesOf(c.id, r.id);
      expect(issues).toHaveLength(1);
      expect(issues[0]).toMatchObject({ assigneeAgentId: agent.id, originKind: 'routine_execution', status: 'todo' });
      const [run] = (await t.http.get(`/api/routines/${r.id}/runs`).expect(200)).body;
      expect(run).toMatchObject({
        source: 'schedule',
        status: 'issue_created',
        triggerId: r.triggers[0].id,
        scheduledFor: due.toISOString(),
        missedCount: 0,
      });
      expect(run.trigger).toMatchObject({ id: r.triggers[0].id, lastResult: 'issue_created' });
      const trigger = (await t.http.get(`/api/routines/${r.id}`).expect(200)).body.triggers[0];
      expect(new Date(trigger.nextRunAt).getTime()).toBeGreaterThan(Date.now());
      expect(localTime(trigger.nextRunAt, 'Europe/Berlin')).toBe('09:00');
      expect(trigger.lastFiredAt).not.toBeNull();
      expect((await activityOf(t, c.id, 'routine.fired'))[0]).toMatchObject({
        actorType: 'system',
        entityType: 'routine',
        entityId: r.id,
        details: { runId: run.id, status: 'issue_created', issueId: issues[0].id },
      });
    });

    it('keeps local time across daylight-saving moves (Europe/Berlin, spring forward and fall back)', async () => {
      const clock = t.app.get(Clock);
      try {
        const { c, agent } = await setup();
        clock.set('2026-03-28T12:00:00Z');
        const r = await createRoutine(c.id, {
          assigneeAgentId: agent.id,
          concurrencyPolicy: 'always_create',
          triggers: [
            { kind: 'schedule', cronExpression: '0 9 * * *', timezone: 'Europe/Berlin' },
            { kind: 'schedule', cronExpression: '30 2 * * *', timezone: 'Europe/Berlin' },
          ],
        });
        const [nine, gap] = r.triggers;
        // 09:00 CET is 08:00Z, but the next 09:00 is on the first day of summer time: 07:00Z
        expect(nine.nextRunAt).toBe('2026-03-29T07:00:00.000Z');
        // 02:30 does not exist on 29 March: it fires at the next valid instant, 03:30 CEST
        expect(gap.nextRunAt).toBe('2026-03-29T01:30:00.000Z');
        const next = async () => (await t.http.get(`/api/routines/${r.id}`).expect(200)).body.triggers.map((x: Rec) => x.nextRunAt);
        clock.set('2026-03-29T01:30:05Z');
        await scheduler.tick();
        expect(await next()).toEqual(['2026-03-29T07:00:00.000Z', '2026-03-30T00:30:00.000Z']);
        clock.set('2026-03-29T07:00:05Z');
        await scheduler.tick();
        expect(await next()).toEqual(['2026-03-30T07:00:00.000Z', '2026-03-30T00:30:00.000Z']);
        // autumn: 02:30 happens twice on 25 October and fires once; 09:00 moves back to 08:00Z
        await t.http.post(`/api/routines/${r.id}/pause`).expect(200);
        clock.set('2026-10-24T12:00:00Z');
        await t.http.post(`/api/routines/${r.id}/resume`).expect(200);
        expect(await next()).toEqual(['2026-10-25T08:00:00.000Z', '2026-10-25T00:30:00.000Z']);
        clock.set('2026-10-25T00:30:05Z');
        await scheduler.tick();
        clock.set('2026-10-25T01:30:05Z');
        await scheduler.tick();
        expect((await next())[1]).toBe('2026-10-26T01:30:00.000Z');
        const runs = (await t.http.get(`/api/routines/${r.id}/runs`).expect(200)).body;
        expect(runs.map((x: Rec) => x.scheduledFor).sort()).toEqual([
          '2026-03-29T01:30:00.000Z',
          '2026-03-29T07:00:00.000Z',
          '2026-10-25T00:30:00.000Z',
        ]);
      } finally {
        clock.set(null);
      }
    });

    it('coalesces the firings missed during downtime into one execution (catchUpPolicy coalesce)', async () => {
      const clock = t.app.get(Clock);
      try {
        const { c, agent } = await setup();
        const r = await createRoutine(c.id, {
          assigneeAgentId: agent.id,
          concurrencyPolicy: 'always_create',
          triggers: [{ kind: 'schedule', cronExpression: '*/5 * * * *' }],
        });
        // the service was down from just before 10:00 to 12:00:30: the 10:00 firing and the 24 after it came and went
        await makeDue(r.id, new Date('2026-01-01T10:00:00Z'));
        clock.set('2026-01-01T12:00:30Z');
        await scheduler.tick();
        await scheduler.tick();
        expect(await issuesOf(c.id, r.id)).toHaveLength(1);
        const runs = (await t.http.get(`/api/routines/${r.id}/runs`).expect(200)).body;
        expect(runs).toHaveLength(1);
        expect(runs[0]).toMatchObject({ scheduledFor: '2026-01-01T10:00:00.000Z', missedCount: 24, triggerPayload: { missedCount: 24 } });
        expect((await t.http.get(`/api/routines/${r.id}`).expect(200)).body.triggers[0].nextRunAt).toBe('2026-01-01T12:05:00.000Z');
      } finally {
        clock.set(null);
      }
    });

    it('drops firings missed during downtime with catchUpPolicy skip_missed (recorded as skipped)', async () => {
      const { c, agent } = await setup();
      const r = await createRoutine(c.id, {
        assigneeAgentId: agent.id,
        catchUpPolicy: 'skip_missed',
        triggers: [{ kind: 'schedule', cronExpression: '*/5 * * * *' }],
      });
      await makeDue(r.id, new Date(Date.now() - 3600_000));
      await scheduler.tick();
      expect(await issuesOf(c.id, r.id)).toHaveLength(0);
      const [run] = (await t.http.get(`/api/routines/${r.id}/runs`).expect(200)).body;
      expect(run).toMatchObject({ status: 'skipped', linkedIssueId: null });
      // an on-time firing still creates its issue
      await makeDue(r.id);
      await scheduler.tick();
      expect(await issuesOf(c.id, r.id)).toHaveLength(1);
    });

    it('pause clears the next firing (nothing fires); resume restarts the schedule from now', async () => {
      const { c, agent } = await setup();
      const r = await createRoutine(c.id, { assigneeAgentId: agent.id, triggers: [{ kind: 'schedule', cronExpression: '*/5 * * * *' }] });
      const paused = (await t.http.post(`/api/routines/${r.id}/pause`).expect(200)).body;
      expect(paused).toMatchObject({ status: 'paused' });
      expect(paused.triggers[0].nextRunAt).toBeNull();
      await scheduler.tick();
      expect(await issuesOf(c.id, r.id)).toHaveLength(0);
      const resumed = (await t.http.post(`/api/routines/${r.id}/resume`).expect(200)).body;
      expect(resumed.status).toBe('active');
      expect(new Date(resumed.triggers[0].nextRunAt).getTime()).toBeGreaterThan(Date.now());
      // a disabled trigger has no next firing either
      const tr = (await t.http.patch(`/api/routine-triggers/${r.triggers[0].id}`).send({ enabled: false }).expect(200)).body;
      expect(tr.nextRunAt).toBeNull();
      const tr2 = (
        await t.http
          .patch(`/api/routine-triggers/${r.triggers[0].id}`)
          .send({ enabled: true, cronExpression: '15 6 * * 1', timezone: 'Asia/Tokyo' })
          .expect(200)
      ).body;
      expect(localTime(tr2.nextRunAt, 'Asia/Tokyo')).toBe('06:15');
      await t.http.patch(`/api/routine-triggers/${r.triggers[0].id}`).send({ timezone: 'Nowhere/Land' }).expect(422);
      await t.http.delete(`/api/routine-triggers/${r.triggers[0].id}`).expect(200);
      expect((await t.http.get(`/api/routines/${r.id}`).expect(200)).body.triggers).toEqual([]);
      expect((await activityOf(t, c.id)).map((a) => a.action)).toEqual(
        expect.arrayContaining(['routine.paused', 'routine.resumed', 'routine.trigger_updated', 'routine.trigger_deleted']),
      );
    });

    it('two instances on one database create exactly one execution per scheduled firing', async () => {
      const second = await createTestApp({ databaseUrl: t.databaseUrl });
      try {
        const other = second.app.get(RoutinesScheduler);
        const { c, agent } = await setup();
        const routines: Rec[] = [];
        for (let i = 0; i < 12; i++) {
          routines.push(
            await createRoutine(c.id, {
              assigneeAgentId: agent.id,
              concurrencyPolicy: 'always_create',
              triggers: [{ kind: 'schedule', cronExpression: '*/5 * * * *' }],
            }),
          );
        }
        for (let round = 0; round < 3; round++) {
          for (const r of routines) await makeDue(r.id);
          await Promise.all([scheduler.tick(), other.tick(), scheduler.tick(), other.tick()]);
        }
        const rows = await t.dataSource.query(
          `SELECT origin_id, count(*)::int AS n FROM issues WHERE company_id = $1 AND origin_kind = 'routine_execution' GROUP BY origin_id`,
          [c.id],
        );
        expect(rows).toHaveLength(12);
        for (const row of rows) expect(row.n).toBe(3);
        const runs = await t.dataSource.query(`SELECT count(*)::int AS n FROM routine_runs WHERE company_id = $1`, [c.id]);
        expect(runs[0].n).toBe(36);
      } finally {
        await second.close();
      }
    });
  });

  describe('PATCH / DELETE /api/routines/:routineId', () => {
    it('updates fields, pauses through status, deletes (issues stay); activity for each', async () => {
      const { c, agent } = await setup();
      const r = await createRoutine(c.id, { assigneeAgentId: agent.id, triggers: [{ kind: 'schedule', cronExpression: '0 * * * *' }] });
      const goal = (await t.http.post(`/api/companies/${c.id}/goals`).send({ title: 'g' }).expect(201)).body;
      const up = (
        await t.http
          .patch(`/api/routines/${r.id}`)
          .send({ title: 'Renamed', goalId: goal.id, status: 'paused', concurrencyPolicy: 'always_create' })
          .expect(200)
      ).body;
      expect(up).toMatchObject({ title: 'Renamed', goalId: goal.id, status: 'paused', concurrencyPolicy: 'always_create' });
      expect(up.triggers[0].nextRunAt).toBeNull();
      await t.http.patch(`/api/routines/${r.id}`).send({ title: null }).expect(400);
      await t.http.patch(`/api/routines/${r.id}`).send({ status: 'sleeping' }).expect(400);
      const run = (await t.http.post(`/api/routines/${r.id}/run`).expect(202)).body;
      expect((await t.http.get(`/api/issues/${run.linkedIssueId}`).expect(200)).body.goalId).toBe(goal.id);
      await t.http.delete(`/api/routines/${r.id}`).expect(200);
      await t.http.get(`/api/routines/${r.id}`).expect(404);
      await t.http.get(`/api/issues/${run.linkedIssueId}`).expect(200);
      const actions = (await activityOf(t, c.id)).filter((a) => a.entityId === r.id).map((a) => a.action);
      expect(actions).toEqual(expect.arrayContaining(['routine.created', 'routine.updated', 'routine.run_requested', 'routine.deleted']));
    });
  });

  describeWithoutCredentials([
    ['get', `/api/companies/${randomUUID()}/routines`],
    ['post', `/api/companies/${randomUUID()}/routines`, { title: 'x' }],
    ['get', `/api/routines/${randomUUID()}`],
    ['post', `/api/routines/${randomUUID()}/run`],
  ]);
});
