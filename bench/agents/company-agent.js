#!/usr/bin/env node
// The agent of the `company` bench scenario (process adapter), one heartbeat per run, following the
// agent protocol of examples/agents/first-agent.js: it checks out the issue that woke it, and
//  - with reports (the CEO, a manager): makes sure the issue has its BENCH_FANOUT children, each
//    assigned to one of its reports, marks the issue blocked by them, moves them from the backlog
//    to todo (which wakes their assignees), comments, and finishes the issue once every child is
//    done (the last child's completion wakes it again: a blocker_resolved wake);
//  - without reports (an engineer): comments, reports its cost and marks the issue done.
// A run may be a retry of a run lost with its instance: it creates only the children that are
// missing, so a retried delegation never duplicates work. Node 20+, no dependencies.
'use strict';

const env = process.env;
const headers = {
  authorization: `Bearer ${env.SERVICE_API_KEY}`,
  'x-service-run-id': env.SERVICE_RUN_ID,
  'content-type': 'application/json',
};
const FANOUT = Number(env.BENCH_FANOUT ?? 1);

async function call(method, path, body) {
  const res = await fetch(env.SERVICE_API_URL + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}
const items = (page) => (Array.isArray(page) ? page : (page.items ?? page.data ?? []));
const closed = (s) => s === 'done' || s === 'cancelled';

async function finish(issueId, note) {
  await call('POST', `/api/issues/${issueId}/comments`, { body: note });
  await call('PATCH', `/api/issues/${issueId}`, { status: 'done' });
}

async function main() {
  const issueId = env.SERVICE_TASK_ID;
  if (!issueId) return console.log('woken without an issue: nothing to do');
  const [me, issue] = await Promise.all([call('GET', '/api/agents/me'), call('GET', `/api/issues/${issueId}`)]);
  if (closed(issue.status)) return console.log(`${issue.identifier} is ${issue.status}: nothing to do`);
  // a stale checkout of our own earlier run (the delegation run, or a run lost with its instance) is adopted
  await call('POST', `/api/issues/${issueId}/checkout`, {
    agentId: me.id,
    expectedStatuses: ['todo', 'backlog', 'in_progress', 'blocked'],
  });

  const co = env.SERVICE_COMPANY_ID;
  const reports = items(await call('GET', `/api/companies/${co}/agents`))
    .filter((a) => a.reportsTo === me.id)
    .sort((a, b) => a.name.localeCompare(b.name));
  if (!reports.length) {
    await call('POST', `/api/companies/${co}/cost-events`, {
      agentId: me.id,
      issueId,
      provider: 'bench',
      model: 'bench-model-1',
      inputTokens: 1200,
      outputTokens: 300,
      costCents: 1,
      occurredAt: new Date().toISOString(),
    });
    return finish(issueId, `Done by ${me.name} in run ${env.SERVICE_RUN_ID}.`);
  }

  const childrenOf = async () => items(await call('GET', `/api/companies/${co}/issues?parentId=${issueId}&limit=500`));
  let children = await childrenOf();
  if (children.length >= FANOUT && children.every((c) => closed(c.status)))
    return finish(issueId, `All ${children.length} parts are done.`);
  const n = Number(String(issue.identifier).split('-').pop()) || 0;
  const have = new Set(children.map((c) => c.title));
  // children start in the backlog (no wake): none can finish before this issue is marked blocked by
  // it, else its completion could miss the blocker_resolved wake (a close that runs concurrently with
  // the PATCH below does not see the new relation, and its commit may not be visible yet to a re-read)
  for (let k = 0; k < FANOUT; k++) {
    const title = `${issue.title} / part ${k + 1}`;
    if (have.has(title)) continue;
    const to = reports[(n * FANOUT + k) % reports.length];
    children.push(
      await call('POST', `/api/companies/${co}/issues`, { title, parentId: issueId, assigneeAgentId: to.id, status: 'backlog' }),
    );
  }
  await call('PATCH', `/api/issues/${issueId}`, { blockedByIssueIds: children.map((c) => c.id) });
  // then they become actionable: each assignee is woken
  for (const c of children) if (c.status === 'backlog') await call('PATCH', `/api/issues/${c.id}`, { status: 'todo' });
  if (!have.size) await call('POST', `/api/issues/${issueId}/comments`, { body: `Delegated in ${children.length} parts.` });
  console.log(`${issue.identifier}: waiting for ${children.filter((c) => !closed(c.status)).length} parts`);
}

main().catch((err) => {
  console.error(err.message);
  process.exit(1);
});
