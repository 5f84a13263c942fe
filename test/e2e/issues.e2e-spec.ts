import { randomUUID } from 'node:crypto';
import { createCompany } from '../support/factories';
import { agentHeaders, createIssue, insertAgent, insertGoal, insertProject } from '../support/issues';
import { createTestApp, TestApp } from '../support/test-app';

describe('issues', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  describe('POST /api/companies/:companyId/issues', () => {
    it('creates with defaults backlog/medium and identifier <PREFIX>-<n>', async () => {
      const c = await createCompany(t);
      const a = await createIssue(t, c.id);
      const b = await createIssue(t, c.id, { status: 'todo', priority: 'high' });
      expect(a).toMatchObject({ status: 'backlog', priority: 'medium', identifier: `${c.issuePrefix}-1`, issueNumber: 1, companyId: c.id, labelIds: [], blockedByIssueIds: [], originKind: 'manual' });
      expect(b).toMatchObject({ status: 'todo', priority: 'high', identifier: `${c.issuePrefix}-2` });
      const company = (await t.http.get(`/api/companies/${c.id}`).expect(200)).body;
      expect(company.issueCounter).toBe(3);
    });
  });
});
