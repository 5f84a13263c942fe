'use strict';
// A company at work: a CEO, ten managers and 100 engineers (process agents running
// bench/agents/company-agent.js, which follows the agent protocol) over three service instances on
// one database. The board gives the CEO its parents; the CEO delegates each to a manager, the manager
// splits it among its engineers (BENCH_COMPANY_FANOUT children), engineers do the work, and each
// level finishes its issue once its children are done (blocker_resolved wakes). One instance is
// killed (SIGKILL) once BENCH_COMPANY_KILL_AT of the issues are done; its runs are retried elsewhere.
// Reports runs/s, issue done-latency (created -> completed) p50/p99, and service CPU per run (the
// three Node processes; the embedded Postgres apart), and checks: 0 duplicated runs, 0 lost issues
// (every parent has its children, no more, no fewer), 0 stuck (everything done, no run left).
//   BENCH_COMPANY_ISSUES   total issues (default 5,000 = 500 parents x (1 + 1 + 8)); 200 takes about a minute
//   BENCH_COMPANY_FANOUT   children of a manager's issue (default 8)
//   BENCH_COMPANY_TIMEOUT  seconds before the scenario gives up (default 1,800)
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { api, databaseUrl, startService } = require('../lib');

const TOTAL = Number(process.env.BENCH_COMPANY_ISSUES ?? 5000);
const FANOUT = Number(process.env.BENCH_COMPANY_FANOUT ?? 8);
const PARENTS = Math.max(1, Math.floor(TOTAL / (FANOUT + 2)));
const ISSUES = PARENTS * (FANOUT + 2);
const TIMEOUT_S = Number(process.env.BENCH_COMPANY_TIMEOUT ?? 1800);
const KILL_AT = Number(process.env.BENCH_COMPANY_KILL_AT ?? 0.3);
const MANAGERS = 10;
const ENGINEERS = 100;
// fast failure detection, so that the killed instance's runs come back within seconds
const ENGINE_ENV = {
  SERVICE_HEARTBEAT_TICK_MS: '200',
  SERVICE_HEARTBEAT_REAPER_MS: '1000',
  SERVICE_HEARTBEAT_KEEPALIVE_MS: '1000',
  SERVICE_HEARTBEAT_LEASE_SEC: '5',
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : 0;
};
/** utime + stime of a live process, in seconds (USER_HZ 100); with `children`, also what it reaped */
const cpuOf = (pid, children = false) => {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const r = f
      .slice(f.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    return (r[11] + r[12] + (children ? r[13] + r[14] : 0)) / 100;
  } catch {
    return null;
  }
};
/** the embedded cluster's CPU: its postmaster, what it reaped, and its live backends */
const postgresCpu = (dataDir) => {
  const pm = Number(fs.readFileSync(path.join(dataDir, 'db', 'postmaster.pid'), 'utf8').split('\n')[0]);
  let total = cpuOf(pm, true) ?? 0;
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const f = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      if (Number(f.slice(f.lastIndexOf(')') + 2).split(' ')[1]) === pm) total += cpuOf(p) ?? 0;
    } catch {
      /* gone */
    }
  }
  return total;
};

module.exports = async function company() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-co-'));
  // the agent script where every agent identity can read it
  const scripts = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-co-agent-'));
  fs.chmodSync(scripts, 0o755);
  const script = path.join(scripts, 'company-agent.js');
  fs.copyFileSync(path.join(__dirname, '..', 'agents', 'company-agent.js'), script);
  fs.chmodSync(script, 0o755);
  const instances = [await startService({ ...ENGINE_ENV, SERVICE_DATA_DIR: dataDir, SERVICE_INSTANCE_ID: 'company-1' })];
  const url = databaseUrl({ dataDir });
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    for (const n of [2, 3]) instances.push(await startService({ ...ENGINE_ENV, DATABASE_URL: url, SERVICE_INSTANCE_ID: `company-${n}` }));
    const bases = instances.map((s) => s.baseUrl);
    const base = bases[0];
    const co = await api(base, 'POST', '/api/companies', { name: `Company Bench ${Date.now()}` });
    const hire = (name, role, reportsTo, fanout) =>
      api(bases[Math.floor(Math.random() * 3)], 'POST', `/api/companies/${co.id}/agents`, {
        name,
        role,
        ...(reportsTo ? { reportsTo } : {}),
        adapterType: 'process',
        adapterConfig: { command: process.execPath, args: [script], env: { BENCH_FANOUT: String(fanout) }, timeoutSec: 120 },
      });
    const ceo = await hire('CEO', 'ceo', null, 1);
    const managers = [];
    for (let m = 0; m < MANAGERS; m++) {
      const mgr = await hire(`Manager ${String(m).padStart(2, '0')}`, 'manager', ceo.id, FANOUT);
      await api(base, 'PATCH', `/api/agents/${mgr.id}/permissions`, { canAssignTasks: true });
      managers.push(mgr);
    }
    for (let e = 0; e < ENGINEERS; e++) await hire(`Engineer ${String(e).padStart(3, '0')}`, 'engineer', managers[e % MANAGERS].id, 1);
    console.log(`company: ${PARENTS} parents x (1 manager issue + ${FANOUT} engineer issues) = ${ISSUES} issues over 3 instances`);

    const cpu0 = instances.map((s) => cpuOf(s.pid));
    const pg0 = postgresCpu(dataDir);
    const t0 = Date.now();
    // the board files the parents, spread over the instances; each assignment wakes the CEO
    for (let i = 0; i < PARENTS; i += 10) {
      await Promise.all(
        Array.from({ length: Math.min(10, PARENTS - i) }, (_, j) =>
          api(bases[(i + j) % 3], 'POST', `/api/companies/${co.id}/issues`, {
            title: `Goal ${i + j + 1}`,
            assigneeAgentId: ceo.id,
            status: 'todo',
          }),
        ),
      );
    }
    let killedCpu = null;
    let killedAt = null;
    let done = 0;
    for (let lastLog = Date.now(); ;) {
      const { rows } = await db.query(
        `SELECT count(*) FILTER (WHERE status = 'done')::int AS done,
                (SELECT count(*)::int FROM heartbeat_runs WHERE company_id = $1 AND status IN ('queued', 'running')) AS live
           FROM issues WHERE company_id = $1`,
        [co.id],
      );
      done = rows[0].done;
      if (done === ISSUES && rows[0].live === 0) break;
      if (killedAt === null && done >= ISSUES * KILL_AT) {
        killedCpu = cpuOf(instances[2].pid);
        await instances[2].kill();
        killedAt = (Date.now() - t0) / 1000;
        console.log(`company: killed instance company-3 (SIGKILL) at ${killedAt.toFixed(1)} s, ${done}/${ISSUES} done`);
      }
      if (Date.now() - t0 > TIMEOUT_S * 1000) {
        console.log(`company: gave up after ${TIMEOUT_S} s`);
        break;
      }
      if (Date.now() - lastLog > 10_000) {
        lastLog = Date.now();
        console.log(`company: ${Math.round((Date.now() - t0) / 1000)} s, ${done}/${ISSUES} done, ${rows[0].live} runs live`);
      }
      await sleep(200);
    }
    const wall = (Date.now() - t0) / 1000;
    const nodeCpu = instances.reduce((sum, s, i) => sum + ((i === 2 && killedCpu !== null ? killedCpu : cpuOf(s.pid)) - cpu0[i]), 0);
    const pgCpu = postgresCpu(dataDir) - pg0;

    const q = async (sql) => (await db.query(sql, [co.id])).rows;
    const [runs] = await q(
      `SELECT count(*)::int AS all, count(*) FILTER (WHERE status = 'succeeded')::int AS ok,
              count(*) FILTER (WHERE status IN ('queued', 'running'))::int AS live
         FROM heartbeat_runs WHERE company_id = $1`,
    );
    const failed = await q(
      `SELECT coalesce(error_code, status) AS code, count(*)::int AS n FROM heartbeat_runs
        WHERE company_id = $1 AND status NOT IN ('succeeded', 'queued', 'running') GROUP BY 1 ORDER BY 2 DESC`,
    );
    const byInstance = await q(`SELECT claimed_by, count(*)::int AS n FROM heartbeat_runs WHERE company_id = $1 GROUP BY 1 ORDER BY 1`);
    const [dup] = await q(
      `SELECT count(*)::int AS n FROM (SELECT run_id FROM activity_log WHERE company_id = $1 AND action = 'heartbeat.run_started'
        GROUP BY run_id HAVING count(*) > 1) d`,
    );
    // every parent has exactly its children: a retried delegation must not have made them twice
    const [shape] = await q(
      `SELECT count(*) FILTER (WHERE p.parent_id IS NULL)::int AS roots,
              count(*) FILTER (WHERE p.parent_id IS NULL AND p.kids <> 1)::int AS bad_roots,
              count(*) FILTER (WHERE p.depth = 1 AND p.kids <> ${FANOUT})::int AS bad_managers,
              count(*)::int AS issues, count(*) FILTER (WHERE p.status <> 'done')::int AS open
         FROM (SELECT i.id, i.parent_id, i.status, (SELECT count(*) FROM issues c WHERE c.parent_id = i.id) AS kids,
                      CASE WHEN i.parent_id IS NULL THEN 0
                           WHEN (SELECT parent_id FROM issues x WHERE x.id = i.parent_id) IS NULL THEN 1 ELSE 2 END AS depth
                 FROM issues i WHERE i.company_id = $1) p`,
    );
    const lat = (
      await q(
        `SELECT extract(epoch FROM completed_at - created_at) * 1000 AS ms FROM issues WHERE company_id = $1 AND completed_at IS NOT NULL`,
      )
    ).map((r) => Number(r.ms));
    if (shape.open) {
      // what became of the issues left open: their runs, and any retry the engine skipped
      const open = await q(
        `SELECT i.identifier, i.status, a.name AS assignee,
                (SELECT string_agg(r.status || coalesce(':' || r.error_code, '') || '@' || coalesce(r.claimed_by, '-'), ' ' ORDER BY r.created_at)
                   FROM heartbeat_runs r WHERE r.issue_id = i.id) AS runs,
                (SELECT string_agg(l.action || ' ' || coalesce(l.details->>'reason', ''), '; ') FROM activity_log l
                  WHERE l.company_id = i.company_id AND l.action LIKE 'heartbeat.run_retr%'
                    AND l.run_id IN (SELECT id FROM heartbeat_runs r WHERE r.issue_id = i.id)) AS retries
           FROM issues i LEFT JOIN agents a ON a.id = i.assignee_agent_id WHERE i.company_id = $1 AND i.status <> 'done' LIMIT 10`,
      );
      for (const o of open)
        console.log(`company: open ${o.identifier} (${o.status}, ${o.assignee}): runs ${o.runs}; ${o.retries ?? 'no retry'}`);
    }
    const lost = PARENTS - shape.roots + shape.bad_roots + shape.bad_managers + (ISSUES - Math.min(ISSUES, shape.issues));
    const stuck = shape.open + runs.live;
    console.log(
      `company: ${runs.all} runs (${byInstance.map((b) => `${b.claimed_by} ${b.n}`).join(', ')}); not succeeded: ${
        failed.map((f) => `${f.code} ${f.n}`).join(', ') || 'none'
      }; ${shape.issues} issues; service CPU ${nodeCpu.toFixed(1)} s (Node, 3 instances), Postgres ${pgCpu.toFixed(1)} s; wall ${wall.toFixed(1)} s`,
    );
    return [
      {
        name: `company ${ISSUES} issues: runs/s (${runs.all} runs)`,
        reqPerSec: Math.round((runs.all / wall) * 10) / 10,
        p50Ms: '-',
        p99Ms: '-',
        errors: 0,
        non2xx: 0,
      },
      {
        name: `company: issue done-latency`,
        reqPerSec: '-',
        p50Ms: Math.round(pct(lat, 50)),
        p99Ms: Math.round(pct(lat, 99)),
        errors: 0,
        non2xx: 0,
      },
      {
        name: `company: service CPU per run (Node / Postgres)`,
        reqPerSec: '-',
        p50Ms: `${((nodeCpu * 1000) / runs.all).toFixed(1)} / ${((pgCpu * 1000) / runs.all).toFixed(1)} ms`,
        p99Ms: '-',
        errors: 0,
        non2xx: 0,
      },
      {
        name: `company: duplicated ${dup.n}, lost ${lost}, stuck ${stuck}, done ${shape.issues - shape.open}/${ISSUES}`,
        reqPerSec: '-',
        p50Ms: '-',
        p99Ms: '-',
        errors: dup.n + lost + stuck,
        non2xx: 0,
      },
    ];
  } finally {
    await db.end();
    for (const s of instances.slice(1).reverse()) await s.stop();
    await instances[0].stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(scripts, { recursive: true, force: true });
  }
};
