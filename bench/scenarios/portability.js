'use strict';
const { api } = require('../lib');

/** A generated package: 50 agents (an org chart), 20 projects, 100 skills, `issues` tasks spread over them. */
function generatedPackage(issues) {
  const files = {
    'COMPANY.md':
      '---\nschema: agentcompanies/v1\nname: Bench Portable\nlabels:\n  - name: bug\n  - name: feature\n---\nA generated company.\n',
  };
  for (let i = 0; i < 50; i++) {
    const reportsTo = i === 0 ? '' : `reportsTo: agent-${Math.floor((i - 1) / 5)}\n`;
    files[`agents/agent-${i}/AGENTS.md`] =
      `---\nname: Agent ${i}\nrole: ${i === 0 ? 'ceo' : 'engineer'}\n${reportsTo}skills:\n  - skill-${i}\nadapter:\n  type: process\n  config:\n    command: "true"\nenv:\n  MODE: fast\n---\nYou are agent ${i}. ${'Do good work. '.repeat(20)}\n`;
  }
  for (let i = 0; i < 20; i++) {
    files[`projects/project-${i}/PROJECT.md`] =
      `---\nname: Project ${i}\nowner: agent-${i}\nworkspaces:\n  - name: main\n    repoUrl: https://example.com/p${i}.git\n---\nProject ${i}.\n`;
  }
  for (let i = 0; i < 100; i++) {
    files[`skills/skill-${i}/SKILL.md`] =
      `---\nname: skill-${i}\ndescription: Bench skill ${i}\n---\n\n${'Step by step instructions. '.repeat(40)}\n`;
    files[`skills/skill-${i}/references/notes.md`] = `# Notes ${i}\n\n${'Reference material. '.repeat(30)}\n`;
  }
  for (let i = 0; i < issues; i++) {
    files[`tasks/t-${i}/TASK.md`] =
      `---\nname: Task ${i} of the bench\nassignee: agent-${i % 50}\nproject: project-${i % 20}\nstatus: todo\npriority: medium\nlabels:\n  - ${i % 2 ? 'bug' : 'feature'}\n${i % 10 === 0 ? 'comments:\n  - body: A first comment on this task.\n' : ''}---\nDescription of task ${i}: ${'details '.repeat(20)}\n`;
  }
  return files;
}

async function timed(fn) {
  const started = process.hrtime.bigint();
  const out = await fn();
  return { ms: Math.round(Number(process.hrtime.bigint() - started) / 1e6), out };
}

async function tarBytes(baseUrl, companyId) {
  const res = await fetch(`${baseUrl}/api/companies/${companyId}/exports`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ include: { issues: true } }),
  });
  if (res.status !== 200) throw new Error(`exports: ${res.status}`);
  let n = 0;
  for await (const chunk of res.body) n += chunk.length;
  return n;
}

/**
 * Portability at size: import of a package with 50 agents, 20 projects, 100 skills and 10,000
 * tasks into a new company (one request, one transaction), its export as JSON and as a streamed
 * .tar.gz, and the re-import of that export (each a single request; wall time, 1 run each).
 */
module.exports = async function portability(baseUrl) {
  const issues = Number(process.env.BENCH_PORTABILITY_ISSUES || 10_000);
  const files = generatedPackage(issues);
  const bytes = Object.values(files).reduce((n, s) => n + Buffer.byteLength(s), 0);
  const rows = [];
  const row = (name, ms) => rows.push({ name, reqPerSec: '-', p50Ms: ms, p99Ms: ms, errors: 0, non2xx: 0 });
  const imp = await timed(() =>
    api(baseUrl, 'POST', '/api/companies/import', { source: { type: 'inline', files }, target: { mode: 'new_company' } }),
  );
  row(`POST companies/import (${Object.keys(files).length} files, ${(bytes / 1e6).toFixed(1)} MB) ms`, imp.ms);
  const companyId = imp.out.companyId;
  const exp = await timed(() => api(baseUrl, 'POST', `/api/companies/${companyId}/export`, { include: { issues: true } }));
  const tasks = Object.keys(exp.out.files).filter((p) => p.startsWith('tasks/')).length;
  if (tasks < issues) throw new Error(`export has ${tasks} tasks of ${issues}`);
  row(`POST export JSON (${Object.keys(exp.out.files).length} files) ms`, exp.ms);
  const tar = await timed(() => tarBytes(baseUrl, companyId));
  row(`POST exports .tar.gz (${(tar.out / 1e6).toFixed(1)} MB gz) ms`, tar.ms);
  const again = await timed(() =>
    api(baseUrl, 'POST', '/api/companies/import', {
      source: { type: 'inline', rootPath: exp.out.rootPath, files: exp.out.files },
      target: { mode: 'new_company', newCompanyName: 'Bench Copy' },
    }),
  );
  row('POST companies/import of the export ms', again.ms);
  return rows;
};
