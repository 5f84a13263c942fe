import WebSocket from 'ws';
import { createCompany } from '../support/factories';
import { insertAgent, waitFor } from '../support/heartbeat';
import { createTestApp, TestApp } from '../support/test-app';

interface LiveEvent {
  id: number;
  type: string;
  payload: Record<string, any>;
}

describe('live events: a change comes before what it causes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ listen: true });
  }, 120_000);
  afterAll(() => t.close());

  it("an assigned issue's issue.created activity precedes the wake (heartbeat.run.queued) it causes", async () => {
    const company = await createCompany(t);
    const agent = await insertAgent(t, company.id, { adapterType: 'process', adapterConfig: { command: 'true' } });
    const ws = new WebSocket(`${t.baseUrl!.replace('http', 'ws')}/api/companies/${company.id}/events/ws`);
    const events: LiveEvent[] = [];
    ws.on('message', (d) => events.push(JSON.parse(String(d))));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    try {
      for (let i = 0; i < 3; i++) {
        const issue = await t.http
          .post(`/api/companies/${company.id}/issues`)
          .send({ title: `Do it ${i}`, assigneeAgentId: agent.id, status: 'todo' })
          .expect(201);
        const queued = await waitFor(
          async () => events.find((e) => e.type === 'heartbeat.run.queued' && e.payload.issueId === issue.body.id),
          'run queued',
        );
        const created = events.find(
          (e) => e.type === 'activity.logged' && e.payload.action === 'issue.created' && e.payload.entityId === issue.body.id,
        );
        expect(created).toBeDefined();
        expect(created!.id).toBeLessThan(queued.id);
        expect(events.indexOf(created!)).toBeLessThan(events.indexOf(queued));
      }
    } finally {
      ws.close();
    }
  });
});
