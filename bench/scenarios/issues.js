'use strict';
// Issues at 10 connections on a company seeded with 10,000 issues and 50 agents:
// POST issue, GET list (limit 50), GET list with q (a broad term, a rare word, no match), GET one,
// and checkout+release pairs.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { api, databaseUrl, load } = require('../lib');

const ISSUES = Number(process.env.BENCH_ISSUES ?? 10000);
const AGENTS = 50;
const WORDS = ['deploy', 'billing', 'search', 'login', 'cache', 'report', 'import', 'export', 'queue', 'mobile'];
const PRIORITIES = ['critical', 'high', 'medium', 'low'];
const STATUSES = ['backlog', 'todo', 'in_review', 'done'];
// a vocabulary of 1,000 made-up words used with a skewed (Zipf-like) frequency in titles and
// descriptions, as words are in real issue texts: Postgres' full-text statistics, and so its plans
// for a search, depend on that shape
const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'tus', 'vo', 'zel', 'pra', 'qui', 'dor'];
const VOCABULARY = Array.from(
  { length: 1000 },
  (_, i) => SYLLABLES[i % 10] + SYLLABLES[Math.floor(i / 10) % 10] + SYLLABLES[Math.floor(i / 100)] + 'x',
);
/** the n-th word of issue i: deterministic, word k drawn with probability ~ 1/k */
function vocabularyWord(i, n) {
  const x = Math.sin(i * 12.9898 + n * 78.233) * 43758.5453;
  const r = x - Math.floor(x);
  return VOCABULARY[Math.min(VOCABULARY.length - 1, Math.floor(Math.exp(r * Math.log(VOCABULARY.length + 1))) - 1)];
}
/** A word the seed uses in about 3 issues in 1,000 (rank ~ 600 of the vocabulary). */
const RARE_WORD = VOCABULARY[600];

/** Runs fn over items with at most `width` in flight. */
async function pool(items, width, fn) {
  let i = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (i < items.length) {
        const n = i++;
        await fn(items[n], n);
      }
    }),
  );
}

/**
 * 50 agents through the agents API; where that API is not present (an issues-only build), as rows
 * in the service's embedded database (found through the newest bench data directory).
 */
async function seedAgents(baseUrl, companyId) {
  const probe = await fetch(`${baseUrl}/api/companies/${companyId}/agents`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench Agent 0', role: 'general', adapterType: 'process', adapterConfig: { command: 'true' } }),
  });
  if (probe.ok) {
    const ids = [(await probe.json()).id];
    for (let i = 1; i < AGENTS; i++) {
      const a = await api(baseUrl, 'POST', `/api/companies/${companyId}/agents`, {
        name: `Bench Agent ${i}`,
        role: 'general',
        adapterType: 'process',
        adapterConfig: { command: 'true' },
      });
      ids.push(a.id);
    }
    return ids;
  }
  const dirs = fs
    .readdirSync(os.tmpdir())
    .filter((d) => d.startsWith('svc-bench-'))
    .map((d) => path.join(os.tmpdir(), d));
  dirs.sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  const dataDir = process.env.BENCH_DATA_DIR ?? dirs[0];
  const client = new Client({ connectionString: databaseUrl({ dataDir }) });
  await client.connect();
  try {
    const rows = await client.query(
      `INSERT INTO agents (company_id, name, url_key, adapter_type)
       SELECT $1, 'Bench Agent ' || g, 'bench-agent-' || g, 'process' FROM generate_series(0, $2 - 1) g RETURNING id`,
      [companyId, AGENTS],
    );
    return rows.rows.map((r) => r.id);
  } finally {
    await client.end();
  }
}

module.exports = async function issues(baseUrl, svc) {
  const company = await api(baseUrl, 'POST', '/api/companies', { name: `Bench Issues ${Date.now()}` });
  const base = `${baseUrl}/api/companies/${company.id}/issues`;
  const agents = await seedAgents(baseUrl, company.id);
  const started = Date.now();
  const seeded = [];
  await pool(
    Array.from({ length: ISSUES }, (_, i) => i),
    20,
    async (i) => {
      const issue = await api(baseUrl, 'POST', `/api/companies/${company.id}/issues`, {
        title: `Bench issue ${i} ${WORDS[i % WORDS.length]} ${vocabularyWord(i, 6)} ${vocabularyWord(i, 7)} ${WORDS[(i * 7) % WORDS.length]}`,
        description: `Seeded issue number ${i} about ${WORDS[(i * 3) % WORDS.length]}: ${[0, 1, 2, 3, 4, 5].map((n) => vocabularyWord(i, n)).join(' ')}.`,
        priority: PRIORITIES[i % PRIORITIES.length],
        status: STATUSES[i % STATUSES.length],
      });
      seeded.push(issue);
    },
  );
  console.log(`seeded ${ISSUES} issues and ${agents.length} agents in ${Date.now() - started} ms`);
  if (svc) {
    // what autovacuum does within a minute of a bulk load: statistics, so that plans see the data
    const db = new Client({ connectionString: databaseUrl(svc) });
    await db.connect();
    await db.query('VACUUM ANALYZE issues');
    await db.end();
  }

  // one todo issue and one agent per connection for the checkout+release pairs
  const pairs = [];
  for (let i = 0; i < 10; i++) {
    const issue = await api(baseUrl, 'POST', `/api/companies/${company.id}/issues`, { title: `checkout target ${i}`, status: 'todo' });
    pairs.push({ issueId: issue.id, agentId: agents[i] });
  }
  const json = { 'content-type': 'application/json' };
  let n = 0;
  let client = 0;
  const one = seeded[Math.floor(seeded.length / 2)];
  return [
    await load('POST /api/companies/{id}/issues', {
      url: base,
      method: 'POST',
      headers: json,
      requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ title: `Bench load ${n++} deploy`, priority: 'high' }) }) }],
    }),
    await load('GET /api/companies/{id}/issues?limit=50', { url: `${base}?limit=50` }),
    await load('GET /api/companies/{id}/issues?q=deploy&limit=50', { url: `${base}?q=deploy&limit=50` }),
    await load('GET ...issues?q=<rare word>&limit=50', { url: `${base}?q=${RARE_WORD}&limit=50` }),
    await load('GET ...issues?q=<no match>&limit=50', { url: `${base}?q=nosuchword&limit=50` }),
    await load('GET /api/issues/{id}', { url: `${baseUrl}/api/issues/${one.id}` }),
    await load('POST checkout + POST release (pairs)', {
      url: baseUrl,
      method: 'POST',
      headers: json,
      // each connection works its own issue with its own agent: a checkout, then its release (a
      // connection may start on an issue the warm-up left checked out by the same agent: in_progress)
      setupClient: (c) => {
        const pair = pairs[client++ % pairs.length];
        c.setRequests([
          {
            method: 'POST',
            path: `/api/issues/${pair.issueId}/checkout`,
            headers: json,
            body: JSON.stringify({ agentId: pair.agentId, expectedStatuses: ['todo', 'in_progress'] }),
          },
          { method: 'POST', path: `/api/issues/${pair.issueId}/release`, headers: json, body: '{}' },
        ]);
      },
    }),
  ];
};
