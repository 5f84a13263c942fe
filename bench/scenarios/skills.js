'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { api, load } = require('../lib');

/** A folder with `n` skills (SKILL.md plus a reference each), as a team's skills repository looks. */
function skillFolder(n, prefix) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-skills-'));
  for (let i = 0; i < n; i++) {
    const dir = path.join(root, `${prefix}-${i}`);
    fs.mkdirSync(path.join(dir, 'references'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'SKILL.md'),
      `---\nname: ${prefix}-${i}\ndescription: Bench skill ${i}: how to do task ${i} well.\n---\n\n# ${prefix} ${i}\n\n${'Step by step instructions. '.repeat(40)}\n`,
    );
    fs.writeFileSync(path.join(dir, 'references', 'notes.md'), `# Notes ${i}\n\n${'Reference material. '.repeat(60)}\n`);
  }
  return root;
}

/**
 * Skills: import of a folder of 100 skills (one request, timed), the list of a company with 500
 * skills, and skills/sync of an agent (three references: id, key, slug) at 10 connections.
 */
module.exports = async function skills(baseUrl) {
  const co = await api(baseUrl, 'POST', '/api/companies', { name: 'Bench Skills' });
  const rows = [];
  const folders = [];
  const importMs = [];
  for (let batch = 0; batch < 5; batch++) {
    const dir = skillFolder(100, `bench-${batch}`);
    folders.push(dir);
    const started = process.hrtime.bigint();
    const res = await api(baseUrl, 'POST', `/api/companies/${co.id}/skills/import`, { source: dir });
    importMs.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (res.imported.length !== 100) throw new Error(`imported ${res.imported.length} of 100`);
  }
  for (const d of folders) fs.rmSync(d, { recursive: true, force: true });
  const sorted = [...importMs].sort((a, b) => a - b);
  rows.push({
    name: 'POST skills/import, folder of 100 skills (ms, 5 runs)',
    reqPerSec: '-',
    p50Ms: Math.round(sorted[2]),
    p99Ms: Math.round(sorted[4]),
    errors: 0,
    non2xx: 0,
  });
  const list = await api(baseUrl, 'GET', `/api/companies/${co.id}/skills`);
  if (list.length < 500) throw new Error(`list has ${list.length} skills`);
  rows.push(await load(`GET company skills (${list.length} skills)`, { url: `${baseUrl}/api/companies/${co.id}/skills` }));
  rows.push(
    await load(`GET company skills (${list.length} skills), 1 connection`, {
      url: `${baseUrl}/api/companies/${co.id}/skills`,
      connections: 1,
    }),
  );
  // ten agents, each request syncs the next one (one agent's syncs are serialised by its row lock)
  const agents = [];
  for (let i = 0; i < 10; i++) {
    agents.push(
      await api(baseUrl, 'POST', `/api/companies/${co.id}/agents`, {
        name: `Bench Skill Agent ${i}`,
        adapterType: 'process',
        adapterConfig: { command: 'true' },
      }),
    );
  }
  const picks = [list[10], list[200], list[400]];
  const body = JSON.stringify({ desiredSkills: [picks[0].id, picks[1].key, picks[2].slug] });
  let n = 0;
  rows.push(
    await load('POST agents/{id}/skills/sync (3 references)', {
      url: `${baseUrl}/api/agents/${agents[0].id}/skills/sync`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      requests: [{ setupRequest: (req) => ({ ...req, path: `/api/agents/${agents[n++ % agents.length].id}/skills/sync` }) }],
    }),
  );
  rows.push(
    await load('POST agents/{id}/skills/sync, 1 connection', {
      url: `${baseUrl}/api/agents/${agents[0].id}/skills/sync`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      connections: 1,
    }),
  );
  return rows;
};
