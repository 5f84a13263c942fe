#!/usr/bin/env node
// A first agent for the `process` adapter: one heartbeat through the HTTP API, nothing else.
//
// The service starts this script for each run and hands it, as environment variables:
//   SERVICE_API_URL     where the API is            SERVICE_API_KEY   this run's token (Bearer)
//   SERVICE_RUN_ID      this run (send it as X-Service-Run-Id on every call)
//   SERVICE_AGENT_ID    who we are                  SERVICE_COMPANY_ID  our company
//   SERVICE_TASK_ID     the issue that woke us (empty for a wake without an issue)
//
// It checks the issue out, comments on it, reports what the work cost, and marks it done. Whatever
// it prints ends up in the run log; a non-zero exit fails the run. Node 20+, no dependencies.
'use strict';

const env = process.env;
const headers = {
  authorization: `Bearer ${env.SERVICE_API_KEY}`,
  'x-service-run-id': env.SERVICE_RUN_ID,
  'content-type': 'application/json',
};

async function call(method, path, body) {
  const res = await fetch(env.SERVICE_API_URL + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  console.log(`${method} ${path} -> ${res.status}`);
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}

async function main() {
  const me = await call('GET', '/api/agents/me');
  let issueId = env.SERVICE_TASK_ID;
  if (!issueId) {
    // woken without an issue: take the first open one assigned to us
    const inbox = await call('GET', '/api/agents/me/inbox-lite');
    const items = Array.isArray(inbox) ? inbox : (inbox.items ?? []);
    issueId = items.find((i) => i.status === 'todo')?.id;
    if (!issueId) return console.log('nothing to do');
  }

  const current = await call('GET', `/api/issues/${issueId}`);
  if (current.status === 'done' || current.status === 'cancelled')
    return console.log(`${current.identifier} is ${current.status}: nothing to do`);

  // 1. claim the issue for this run (409 if someone else holds it)
  const issue = await call('POST', `/api/issues/${issueId}/checkout`, { agentId: me.id, expectedStatuses: ['todo', 'backlog'] });
  console.log(`working on ${issue.identifier}: ${issue.title}`);

  // 2. do the "work" and say so on the issue
  await call('POST', `/api/issues/${issueId}/comments`, {
    body: `Hello from ${me.name}. I read "${issue.title}" and did it (run ${env.SERVICE_RUN_ID}).`,
  });

  // 3. report what the work cost (a real agent reports its model's tokens and price)
  await call('POST', `/api/companies/${env.SERVICE_COMPANY_ID}/cost-events`, {
    agentId: me.id,
    issueId,
    provider: 'example',
    model: 'example-model-1',
    inputTokens: 1200,
    outputTokens: 300,
    costCents: 3,
    occurredAt: new Date().toISOString(),
  });

  // 4. finish
  await call('PATCH', `/api/issues/${issueId}`, { status: 'done' });
  console.log(`${issue.identifier} is done`);
}

main().catch((err) => {
  console.error(err.message);
  process.exit(1);
});
