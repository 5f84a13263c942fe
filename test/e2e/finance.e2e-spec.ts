import { bearer, createCompany } from '../support/factories';
import { insertAgent, insertAgentKey, reportCost, unknownId } from '../support/costs';
import { createTestApp, TestApp } from '../support/test-app';

const fe = (extra: Record<string, unknown> = {}) => ({
  kind: 'platform_fee',
  direction: 'debit',
  amountCents: 10,
  currency: 'USD',
  estimated: false,
  ...extra,
});

describe('finance events', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  describe('POST /api/companies/:companyId/finance-events', () => {
    it('creates a finance event with defaults (currency USD, estimated false, occurredAt now) and writes activity', async () => {
      const c = await createCompany(t);
      const res = await t.http
        .post(`/api/companies/${c.id}/finance-events`)
        .send({ kind: 'credit_purchase', direction: 'credit', amountCents: 5000, metadata: { invoice: 'INV-1' }, biller: 'prov-x' })
        .expect(201);
      expect(res.body).toMatchObject({
        companyId: c.id,
        kind: 'credit_purchase',
        direction: 'credit',
        amountCents: 5000,
        currency: 'USD',
        estimated: false,
        biller: 'prov-x',
        metadata: { invoice: 'INV-1' },
      });
      expect(Math.abs(Date.parse(res.body.occurredAt) - Date.now())).toBeLessThan(60_000);
      const [row] = await t.dataSource.query(`SELECT action FROM activity_log WHERE entity_id = $1`, [res.body.id]);
      expect(row.action).toBe('finance_event.created');
    });

    it('is board-only: an agent gets 403', async () => {
      const c = await createCompany(t);
      const a = await insertAgent(t, c.id);
      const token = await insertAgentKey(t, a);
      await t.http.post(`/api/companies/${c.id}/finance-events`).set(bearer(token)).send(fe()).expect(403);
      await t.http.get(`/api/companies/${c.id}/costs/finance-events`).set(bearer(token)).expect(403);
    });

    it('validates kind, direction, amountCents, currency and metadata (400)', async () => {
      const c = await createCompany(t);
      for (const extra of [
        { kind: undefined },
        { kind: 'Platform Fee' },
        { direction: 'sideways' },
        { amountCents: -1 },
        { amountCents: 1.5 },
        { currency: 'usd' },
        { estimated: 'yes' },
        { metadata: 'x' },
        { occurredAt: 'today' },
      ]) {
        await t.http.post(`/api/companies/${c.id}/finance-events`).send(fe(extra)).expect(400);
      }
    });

    it('rejects an agent or cost event of another company with 422', async () => {
      const c = await createCompany(t);
      const other = await createCompany(t);
      const foreign = await insertAgent(t, other.id);
      await t.http
        .post(`/api/companies/${c.id}/finance-events`)
        .send(fe({ agentId: foreign.id }))
        .expect(422);
      const ev = await reportCost(t, other.id, foreign.id, 5).expect(201);
      await t.http
        .post(`/api/companies/${c.id}/finance-events`)
        .send(fe({ costEventId: ev.body.id }))
        .expect(422);
      await t.http.post(`/api/companies/${unknownId()}/finance-events`).send(fe()).expect(404);
    });

    it('returns the original with 200 for a repeated idempotencyKey', async () => {
      const c = await createCompany(t);
      const first = await t.http
        .post(`/api/companies/${c.id}/finance-events`)
        .send(fe({ idempotencyKey: 'f1' }))
        .expect(201);
      const again = await t.http
        .post(`/api/companies/${c.id}/finance-events`)
        .send(fe({ idempotencyKey: 'f1', amountCents: 99 }))
        .expect(200);
      expect(again.body).toEqual(first.body);
    });
  });

  describe('GET /api/companies/:companyId/costs/finance-*', () => {
    it('lists newest first with limit 1..500 (default 100), from/to, kind and direction filters', async () => {
      const c = await createCompany(t);
      for (let i = 0; i < 3; i++) {
        await t.http
          .post(`/api/companies/${c.id}/finance-events`)
          .send(fe({ occurredAt: `2026-04-0${i + 1}T00:00:00.000Z`, kind: i === 2 ? 'tax' : 'platform_fee' }))
          .expect(201);
      }
      const url = `/api/companies/${c.id}/costs/finance-events`;
      const all = await t.http.get(url).expect(200);
      expect(all.body.map((e: { occurredAt: string }) => e.occurredAt)).toEqual([
        '2026-04-03T00:00:00.000Z',
        '2026-04-02T00:00:00.000Z',
        '2026-04-01T00:00:00.000Z',
      ]);
      expect((await t.http.get(url).query({ limit: '1' }).expect(200)).body).toHaveLength(1);
      expect((await t.http.get(url).query({ limit: '500' }).expect(200)).body).toHaveLength(3);
      for (const limit of ['0', '501', '-1', '1.5', 'ten']) await t.http.get(url).query({ limit }).expect(400);
      expect((await t.http.get(url).query({ from: '2026-04-02T00:00:00Z' }).expect(200)).body).toHaveLength(2);
      expect((await t.http.get(url).query({ to: '2026-04-02T00:00:00Z' }).expect(200)).body).toHaveLength(1);
      expect((await t.http.get(url).query({ kind: 'tax' }).expect(200)).body).toHaveLength(1);
      expect((await t.http.get(url).query({ direction: 'credit' }).expect(200)).body).toHaveLength(0);
    });

    it('the default limit is 100', async () => {
      const c = await createCompany(t);
      await t.dataSource.query(
        `INSERT INTO finance_events (company_id, kind, direction, amount_cents, occurred_at, created_by_actor_type, created_by_actor_id)
         SELECT $1, 'platform_fee', 'debit', 1, now() - (i || ' seconds')::interval, 'user', 'x' FROM generate_series(1, 120) i`,
        [c.id],
      );
      expect((await t.http.get(`/api/companies/${c.id}/costs/finance-events`).expect(200)).body).toHaveLength(100);
    });

    it('summarises debit, credit, net and estimated per currency, by biller and by kind', async () => {
      const c = await createCompany(t);
      const post = (extra: Record<string, unknown>) => t.http.post(`/api/companies/${c.id}/finance-events`).send(fe(extra)).expect(201);
      await post({ kind: 'inference_charge', amountCents: 1000, biller: 'b1' });
      await post({ kind: 'inference_charge', amountCents: 500, biller: 'b1', estimated: true });
      await post({ kind: 'credit_refund', direction: 'credit', amountCents: 200, biller: 'b2' });
      await post({ kind: 'platform_fee', amountCents: 300, currency: 'EUR' });
      const summary = (await t.http.get(`/api/companies/${c.id}/costs/finance-summary`).expect(200)).body;
      expect(summary.totals).toEqual([
        { currency: 'USD', debitCents: 1500, creditCents: 200, netCents: 1300, estimatedCents: 500, eventCount: 3 },
        { currency: 'EUR', debitCents: 300, creditCents: 0, netCents: 300, estimatedCents: 0, eventCount: 1 },
      ]);
      const byBiller = (await t.http.get(`/api/companies/${c.id}/costs/finance-by-biller`).expect(200)).body;
      expect(byBiller.map((r: Record<string, unknown>) => [r.biller, r.currency, r.netCents])).toEqual([
        ['b1', 'USD', 1500],
        ['unknown', 'EUR', 300],
        ['b2', 'USD', -200],
      ]);
      const byKind = (await t.http.get(`/api/companies/${c.id}/costs/finance-by-kind`).expect(200)).body;
      expect(byKind.map((r: Record<string, unknown>) => [r.kind, r.debitCents, r.eventCount])).toEqual([
        ['inference_charge', 1500, 2],
        ['platform_fee', 300, 1],
        ['credit_refund', 0, 1],
      ]);
      const empty = (await t.http.get(`/api/companies/${c.id}/costs/finance-summary`).query({ to: '2000-01-01T00:00:00Z' }).expect(200))
        .body;
      expect(empty.totals).toEqual([]);
    });
  });
});
