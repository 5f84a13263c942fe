import { createCompany } from '../support/factories';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * Unknown fields in a request: a request that is refused anyway names them (a misspelt `nam` used to
 * get three messages about `name` and none about `nam`); an otherwise valid request with extra
 * fields is accepted and the extras dropped, as before (clients such as the board UI send them).
 */
describe('unknown fields in validation errors', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('POST /api/companies {"nam": "x"}: 400 naming nam as unknown (did you mean name?) beside the missing name', async () => {
    const res = await t.http.post('/api/companies').send({ nam: 'x' }).expect(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.fields[0]).toEqual({ field: 'nam', messages: ['nam is not a known field (did you mean name?)'] });
    expect(res.body.fields).toContainEqual(
      expect.objectContaining({ field: 'name', messages: expect.arrayContaining(['name must be a string']) }),
    );
    expect(res.body.error).toMatch(/^Validation failed: nam is not a known field \(did you mean name\?\); name /);
  });

  it('names an unknown field without a near one plainly, and every unknown field', async () => {
    const res = await t.http.post('/api/companies').send({ name: '', color: 'red', budgetMonthlyCent: 5 }).expect(400);
    expect(res.body.fields.slice(0, 2)).toEqual([
      { field: 'color', messages: ['color is not a known field'] },
      { field: 'budgetMonthlyCent', messages: ['budgetMonthlyCent is not a known field (did you mean budgetMonthlyCents?)'] },
    ]);
    expect(res.body.fields).toContainEqual(expect.objectContaining({ field: 'name' }));
  });

  it('names unknown fields of a nested object by their path', async () => {
    const res = await t.http
      .patch('/api/instance/settings')
      .send({ general: { instanceNam: 'x', sessionTtlHours: 0 } })
      .expect(400);
    expect(res.body.fields).toContainEqual({
      field: 'general.instanceNam',
      messages: ['general.instanceNam is not a known field (did you mean instanceName?)'],
    });
    expect(res.body.fields).toContainEqual(expect.objectContaining({ field: 'general.sessionTtlHours' }));
  });

  it('names unknown query parameters of a refused query', async () => {
    const c = await createCompany(t);
    const res = await t.http.get('/api/companies').query({ includeArchived: 'yes', includeArchive: 'true' }).expect(400);
    expect(res.body.fields).toContainEqual({
      field: 'includeArchive',
      messages: ['includeArchive is not a known field (did you mean includeArchived?)'],
    });
    // valid, with an extra parameter: answered as before
    const ok = await t.http.get('/api/companies').query({ includeArchived: 'true', extra: '1' }).expect(200);
    expect(ok.body.map((x: { id: string }) => x.id)).toContain(c.id);
  });

  it('accepts an otherwise valid request with extra fields and drops them', async () => {
    const res = await t.http.post('/api/companies').send({ name: 'Acme', nam: 'x', id: 'not-mine', createdAt: 'then' }).expect(201);
    expect(res.body.name).toBe('Acme');
    expect(res.body).not.toHaveProperty('nam');
    expect(res.body.id).not.toBe('not-mine');
  });
});
