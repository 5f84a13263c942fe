import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { extract, list } from 'tar';
import { createAgent, createAgentWithKey, bearer } from '../support/agents';
import { createCompany, uniq } from '../support/factories';
import { createSecret, secretRef } from '../support/secrets';
import { createTestApp, TestApp } from '../support/test-app';

type Files = Record<string, string>;

describe('portability', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  /** A company with an org chart, secrets, a project with two workspaces, goals, labels, a skill, a routine and issues. */
  async function seed() {
    const c = await createCompany(t, { description: 'seeded company' });
    const s1 = await createSecret(t, c.id, { name: uniq('OPENAI_KEY').toUpperCase().replace(/-/g, '_') });
    const s2 = await createSecret(t, c.id, { name: uniq('GH_TOKEN').toUpperCase().replace(/-/g, '_') });
    const ceo = await createAgent(t, c.id, {
      name: 'Chief',
      role: 'ceo',
      title: 'CEO',
      adapterConfig: {
        command: 'true',
        instructions: 'You run the company.',
        env: { OPENAI_API_KEY: secretRef(s1.id), MODE: 'fast', INLINE_TOKEN: 'inline-sensitive-value-123' },
      },
    });
    const eng = await createAgent(t, c.id, {
      name: 'Engineer One',
      role: 'engineer',
      reportsTo: ceo.id,
      adapterConfig: { command: 'true', env: { GH: secretRef(s2.id) } },
    });
    await t.http.post(`/api/companies/${c.id}/labels`).send({ name: 'bug', color: '#ff0000' }).expect(201);
    const goal = (
      await t.http
        .post(`/api/companies/${c.id}/goals`)
        .send({ title: 'Grow', level: 'company', status: 'active', ownerAgentId: ceo.id })
        .expect(201)
    ).body;
    await t.http.post(`/api/companies/${c.id}/goals`).send({ title: 'Ship v1', parentId: goal.id }).expect(201);
    const project = (
      await t.http
        .post(`/api/companies/${c.id}/projects`)
        .send({
          name: 'Website',
          description: 'the site',
          leadAgentId: eng.id,
          goalIds: [goal.id],
          env: { SITE: 'prod' },
          workspace: { name: 'main', repoUrl: 'https://example.com/site.git' },
        })
        .expect(201)
    ).body;
    await t.http.post(`/api/projects/${project.id}/workspaces`).send({ name: 'docs', repoUrl: 'https://example.com/docs.git' }).expect(201);
    const skill = await t.http
      .post(`/api/companies/${c.id}/skills`)
      .send({ name: 'review-code', markdown: '---\nname: review-code\ndescription: Reviews code\n---\n\nReview carefully.\n' });
    expect([200, 201]).toContain(skill.status);
    await t.http
      .post(`/api/companies/${c.id}/routines`)
      .send({
        title: 'Weekly review',
        assigneeAgentId: ceo.id,
        projectId: project.id,
        triggers: [{ kind: 'schedule', cronExpression: '0 9 * * 1', timezone: 'UTC' }],
      })
      .expect(201);
    const parent = (
      await t.http.post(`/api/companies/${c.id}/issues`).send({ title: 'Launch', projectId: project.id, status: 'todo' }).expect(201)
    ).body;
    const child = (
      await t.http
        .post(`/api/companies/${c.id}/issues`)
        .send({ title: 'Write copy', parentId: parent.id, assigneeAgentId: eng.id, status: 'todo' })
        .expect(201)
    ).body;
    await t.http.post(`/api/issues/${child.id}/comments`).send({ body: 'first comment' }).expect(201);
    await t.http.put(`/api/issues/${child.id}/documents/plan`).send({ title: 'Plan', format: 'markdown', body: '# The plan' }).expect(201);
    return { c, ceo, eng, secrets: [s1, s2], project, goal };
  }

  const exportOf = async (companyId: string, include: Record<string, boolean> = { issues: true }) =>
    (await t.http.post(`/api/companies/${companyId}/export`).send({ include }).expect(200)).body as {
      rootPath: string;
      files: Files;
      warnings: string[];
      manifest: Record<string, unknown>;
    };

  /** Files with what differs between companies by design (names of the company, issue identifiers) normalised. */
  const normalise = (files: Files, companyName: string, prefix: string) => {
    const out: Files = {};
    for (const [p, text] of Object.entries(files)) {
      const norm = (s: string) =>
        s
          .split(companyName)
          .join('<company>')
          .replace(new RegExp(`${prefix.toLowerCase()}-(\\d+)`, 'g'), 'issue-$1');
      out[norm(p)] = norm(text).replace(/^slug: .*$/m, (l) => (p === 'COMPANY.md' ? 'slug: <company>' : l));
    }
    return out;
  };

  it('round trip: export A, import as new company B, export B: equal but for ids and names', async () => {
    const { c } = await seed();
    const a = await exportOf(c.id);
    expect(Object.keys(a.files)).toEqual(
      expect.arrayContaining([
        'COMPANY.md',
        'agents/chief/AGENTS.md',
        'agents/engineer-one/AGENTS.md',
        'projects/website/PROJECT.md',
        'goals/grow/GOAL.md',
        'skills/review-code/SKILL.md',
        'routines/weekly-review/TASK.md',
      ]),
    );
    expect(a.files['agents/engineer-one/AGENTS.md']).toContain('reportsTo: chief');
    expect(a.files['agents/chief/AGENTS.md']).toContain('You run the company.');
    expect(a.files['COMPANY.md']).toContain('schema: agentcompanies/v1');
    const preview = (
      await t.http
        .post('/api/companies/import/preview')
        .send({ source: { type: 'inline', ...a }, target: { mode: 'new_company', newCompanyName: 'Copy Co' } })
        .expect(200)
    ).body;
    expect(preview.creates.map((i: { kind: string }) => i.kind)).toEqual(
      expect.arrayContaining(['company', 'agent', 'project', 'goal', 'skill', 'routine', 'issue', 'label']),
    );
    expect(preview.secretsToSet.map((s: { name: string }) => s.name).sort()).toEqual(expect.arrayContaining([]));
    const applied = (
      await t.http
        .post('/api/companies/import')
        .send({ source: { type: 'inline', ...a }, target: { mode: 'new_company', newCompanyName: 'Copy Co' } })
        .expect(201)
    ).body;
    expect(applied.creates).toEqual(preview.creates);
    expect(applied.secretsToSet).toEqual(preview.secretsToSet);
    const b = await exportOf(applied.companyId);
    const prefixA = (await t.http.get(`/api/companies/${c.id}`).expect(200)).body.issuePrefix;
    const prefixB = (await t.http.get(`/api/companies/${applied.companyId}`).expect(200)).body.issuePrefix;
    // B has no secrets yet: its agents' secret bindings are left out until they are set
    const strip = (f: Files) =>
      Object.fromEntries(
        Object.entries(f).map(([k, v]) => [
          k,
          v
            .replace(/\n *OPENAI_API_KEY:\n(?: {4,}.*\n)+/, '\n')
            .replace(/\n *GH:\n(?: {4,}.*\n)+/, '\n')
            .replace(/requirements:\n(?: {2,}.*\n)+/, '')
            .replace(/^env:\n(?=\S)/m, ''),
        ]),
      );
    expect(strip(normalise(b.files, 'Copy Co', prefixB))).toEqual(strip(normalise(a.files, c.name, prefixA)));
    const acts = (await t.http.get(`/api/companies/${applied.companyId}/activity`).expect(200)).body as Array<{ action: string }>;
    expect(acts.map((x) => x.action)).toEqual(expect.arrayContaining(['company.imported', 'agent.created', 'project.created']));
  });

  it('secrets never in a package: no secret value in the JSON export or the archive bytes; refs exported as declarations', async () => {
    const { c, secrets } = await seed();
    const a = await exportOf(c.id);
    const text = JSON.stringify(a);
    for (const s of secrets) {
      expect(text).not.toContain(s.plaintext);
      expect(text).toContain(s.name);
    }
    expect(text).not.toContain('inline-sensitive-value-123');
    expect(a.warnings.join('\n')).toContain('INLINE_TOKEN');
    expect(a.files['agents/chief/AGENTS.md']).toMatch(/OPENAI_API_KEY:\n\s+kind: secret\n\s+secret: /);
    const res = await t.http
      .post(`/api/companies/${c.id}/exports`)
      .send({ include: { issues: true } })
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (d: Buffer) => chunks.push(d));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      })
      .expect(200);
    expect(res.headers['content-type']).toContain('application/gzip');
    expect(res.headers['content-disposition']).toContain('.tar.gz');
    const gz = res.body as Buffer;
    const raw = gunzipSync(gz);
    // a valid archive of the package folder, the same files as the JSON export
    const file = join(mkdtempSync(join(tmpdir(), 'pkg-')), 'p.tar.gz');
    writeFileSync(file, gz);
    const paths: string[] = [];
    list({ file, sync: true, onReadEntry: (e) => paths.push(e.path) });
    expect(paths.sort()).toEqual(
      Object.keys(a.files)
        .map((p) => `${a.rootPath}/${p}`)
        .sort(),
    );
    const dir = mkdtempSync(join(tmpdir(), 'pkgx-'));
    extract({ file, cwd: dir, sync: true });
    expect(readFileSync(join(dir, a.rootPath, 'agents/chief/AGENTS.md'), 'utf8')).toBe(a.files['agents/chief/AGENTS.md']);
    for (const bytes of [gz, raw]) {
      for (const s of secrets) expect(bytes.includes(Buffer.from(s.plaintext))).toBe(false);
      expect(bytes.includes(Buffer.from('inline-sensitive-value-123'))).toBe(false);
    }
    // a secret value pasted into free text is redacted as a last net
    await t.http
      .post(`/api/companies/${c.id}/goals`)
      .send({ title: 'Leaky', description: `oops ${secrets[0].plaintext}` })
      .expect(201);
    const again = await exportOf(c.id);
    expect(JSON.stringify(again)).not.toContain(secrets[0].plaintext);
    expect(again.warnings.join('\n')).toContain('redacted');
  });

  it('import lists missing secrets to set and binds declared secrets that exist by name', async () => {
    const { c, secrets } = await seed();
    const a = await exportOf(c.id, {});
    const target = await createCompany(t);
    await createSecret(t, target.id, { name: secrets[0].name });
    const preview = (
      await t.http
        .post(`/api/companies/${target.id}/imports/preview`)
        .send({ source: { type: 'inline', ...a } })
        .expect(200)
    ).body;
    expect(preview.secretsToSet.map((s: { name: string }) => s.name)).toEqual([secrets[1].name]);
    const applied = (
      await t.http
        .post(`/api/companies/${target.id}/imports/apply`)
        .send({ source: { type: 'inline', ...a } })
        .expect(200)
    ).body;
    const chief = (await t.http.get(`/api/agents/${applied.ids.agent.chief}`).expect(200)).body;
    expect(chief.adapterConfig.env.OPENAI_API_KEY).toMatchObject({ type: 'secret_ref' });
    expect(chief.adapterConfig.env.MODE).toBe('fast');
    expect(chief.adapterConfig.env.INLINE_TOKEN).toBeUndefined();
  });

  describe('collision strategies', () => {
    async function twice(strategy?: string, route: 'company' | 'board' = 'company') {
      const { c } = await seed();
      const a = await exportOf(c.id, {});
      const body = {
        source: { type: 'inline', ...a },
        ...(strategy ? { collisionStrategy: strategy } : {}),
        target: { mode: 'existing_company', companyId: c.id },
      };
      const url = route === 'company' ? `/api/companies/${c.id}/imports` : '/api/companies/import';
      const preview = (
        await t.http
          .post(route === 'company' ? `${url}/preview` : `${url}/preview`)
          .send(body)
          .expect(200)
      ).body;
      const applied = (
        await t.http
          .post(route === 'company' ? `${url}/apply` : url)
          .send(body)
          .expect(route === 'company' ? 200 : 201)
      ).body;
      return { c, preview, applied };
    }

    it('rename (default) creates the colliding entities under free names', async () => {
      const { c, preview, applied } = await twice();
      expect(preview.collisionStrategy).toBe('rename');
      const chief = preview.renames.find((i: { kind: string; slug: string }) => i.kind === 'agent' && i.slug === 'chief');
      expect(chief).toMatchObject({ action: 'rename', targetName: 'Chief 2' });
      expect(applied.renames).toEqual(preview.renames);
      const agents = (await t.http.get(`/api/companies/${c.id}/agents`).expect(200)).body as Array<{
        name: string;
        reportsTo: string | null;
        id: string;
      }>;
      expect(agents.map((x) => x.name).sort()).toEqual(['Chief', 'Chief 2', 'Engineer One', 'Engineer One 2']);
      // the renamed engineer reports to the renamed chief
      const chief2 = agents.find((x) => x.name === 'Chief 2')!;
      expect(agents.find((x) => x.name === 'Engineer One 2')!.reportsTo).toBe(chief2.id);
      const projects = (await t.http.get(`/api/companies/${c.id}/projects`).expect(200)).body as Array<{ name: string }>;
      expect(projects.map((p) => p.name).sort()).toEqual(['Website', 'Website 2']);
    });

    it('skip keeps the existing entities and creates nothing for them', async () => {
      const { c, preview } = await twice('skip');
      expect(preview.creates.filter((i: { kind: string }) => i.kind === 'agent')).toEqual([]);
      expect(preview.skips.map((i: { kind: string; slug: string }) => `${i.kind}:${i.slug}`)).toEqual(
        expect.arrayContaining(['agent:chief', 'agent:engineer-one', 'project:website', 'goal:grow']),
      );
      expect((await t.http.get(`/api/companies/${c.id}/agents`).expect(200)).body).toHaveLength(2);
      expect((await t.http.get(`/api/companies/${c.id}/projects`).expect(200)).body).toHaveLength(1);
    });

    it('replace (board-level route) updates the existing entities in place', async () => {
      const { c } = await seed();
      const a = await exportOf(c.id, {});
      a.files['agents/chief/AGENTS.md'] = a.files['agents/chief/AGENTS.md']
        .replace('title: CEO', 'title: Boss')
        .replace('You run the company.', 'New instructions.');
      const body = {
        source: { type: 'inline', ...a },
        collisionStrategy: 'replace',
        target: { mode: 'existing_company', companyId: c.id },
      };
      const preview = (await t.http.post('/api/companies/import/preview').send(body).expect(200)).body;
      expect(preview.updates.map((i: { kind: string; slug: string }) => `${i.kind}:${i.slug}`)).toEqual(
        expect.arrayContaining(['agent:chief', 'project:website']),
      );
      const res = await t.http.post('/api/companies/import').send(body);
      expect(res.body).toMatchObject({ collisionStrategy: 'replace' });
      const applied = res.body;
      expect(applied.updates).toEqual(preview.updates);
      const agents = (await t.http.get(`/api/companies/${c.id}/agents`).expect(200)).body as Array<{
        id: string;
        name: string;
        title: string;
      }>;
      expect(agents).toHaveLength(2);
      const chief = (await t.http.get(`/api/agents/${agents.find((x) => x.name === 'Chief')!.id}`).expect(200)).body;
      expect(chief.title).toBe('Boss');
      expect(chief.adapterConfig.instructions).toBe('New instructions.');
    });

    it('company-scoped routes reject replace and other target companies; nothing applied', async () => {
      const { c } = await seed();
      const other = await createCompany(t);
      const a = await exportOf(c.id, {});
      const src = { type: 'inline', ...a };
      for (const path of ['preview', 'apply']) {
        const r = await t.http
          .post(`/api/companies/${c.id}/imports/${path}`)
          .send({ source: src, collisionStrategy: 'replace' })
          .expect(422);
        expect(r.body.code).toBe('import_not_allowed');
        await t.http
          .post(`/api/companies/${c.id}/imports/${path}`)
          .send({ source: src, target: { mode: 'existing_company', companyId: other.id } })
          .expect(422);
        await t.http
          .post(`/api/companies/${c.id}/imports/${path}`)
          .send({ source: src, target: { mode: 'new_company' } })
          .expect(422);
        await t.http.post(`/api/companies/${c.id}/imports/${path}`).send({ source: src, collisionStrategy: 'merge' }).expect(400);
      }
      expect((await t.http.get(`/api/companies/${c.id}/agents`).expect(200)).body).toHaveLength(2);
      expect((await t.http.get(`/api/companies/${other.id}/agents`).expect(200)).body).toHaveLength(0);
    });
  });

  it('caller rules of the routes', async () => {
    const { c, ceo } = await seed();
    const ceoKey = (await t.http.post(`/api/agents/${ceo.id}/keys`).send({ name: 'k' }).expect(201)).body.token as string;
    const worker = await createAgentWithKey(t, c.id, { role: 'engineer' });
    const other = await createCompany(t);
    const outsider = await createAgentWithKey(t, other.id, { role: 'ceo' });
    const a = await exportOf(c.id, {});
    const src = { source: { type: 'inline', ...a } };
    // export: any caller with company access
    await t.http.post(`/api/companies/${c.id}/export`).set(bearer(worker.token)).send({}).expect(200);
    await t.http.post(`/api/companies/${c.id}/export`).set(bearer(outsider.token)).send({}).expect(403);
    // exports/preview and exports: board or the company's CEO
    for (const path of ['exports/preview', 'exports']) {
      await t.http.post(`/api/companies/${c.id}/${path}`).set(bearer(ceoKey)).send({}).expect(200);
      await t.http.post(`/api/companies/${c.id}/${path}`).set(bearer(worker.token)).send({}).expect(403);
      await t.http.post(`/api/companies/${c.id}/${path}`).set(bearer(outsider.token)).send({}).expect(403);
    }
    // board-level import routes: board only
    await t.http.post('/api/companies/import/preview').set(bearer(ceoKey)).send(src).expect(403);
    await t.http.post('/api/companies/import').set(bearer(ceoKey)).send(src).expect(403);
    // company-scoped import routes: board or that company's CEO
    await t.http.post(`/api/companies/${c.id}/imports/preview`).set(bearer(ceoKey)).send(src).expect(200);
    await t.http.post(`/api/companies/${c.id}/imports/preview`).set(bearer(worker.token)).send(src).expect(403);
    await t.http.post(`/api/companies/${c.id}/imports/apply`).set(bearer(worker.token)).send(src).expect(403);
    await t.http.post(`/api/companies/${c.id}/imports/apply`).set(bearer(outsider.token)).send(src).expect(403);
    await t.http.post(`/api/companies/${other.id}/imports/apply`).set(bearer(ceoKey)).send(src).expect(403);
    const applied = (
      await t.http
        .post(`/api/companies/${c.id}/imports/apply`)
        .set(bearer(ceoKey))
        .send({ ...src, collisionStrategy: 'skip' })
        .expect(200)
    ).body;
    expect(applied.companyId).toBe(c.id);
    // unauthenticated callers are refused everywhere
    await t.http.post(`/api/companies/${c.id}/export`).set('Authorization', 'Bearer nope').send({}).expect(401);
  });

  it('selections: issues only when asked; exports/preview lists the files with their sizes', async () => {
    const { c } = await seed();
    const without = await exportOf(c.id, {});
    expect(Object.keys(without.files).some((p) => p.startsWith('tasks/'))).toBe(false);
    const noAgents = await exportOf(c.id, { agents: false, skills: false, routines: false });
    expect(Object.keys(noAgents.files).filter((p) => /^(agents|skills|routines)\//.test(p))).toEqual([]);
    const preview = (
      await t.http
        .post(`/api/companies/${c.id}/exports/preview`)
        .send({ include: { issues: true } })
        .expect(200)
    ).body;
    const withIssues = await exportOf(c.id, { issues: true });
    expect(preview.files.map((f: { path: string }) => f.path).sort()).toEqual(Object.keys(withIssues.files).sort());
    expect(preview.manifest.counts.issues).toBe(2);
    expect(preview.totalBytes).toBe(Object.values(withIssues.files).reduce((n, f) => n + Buffer.byteLength(f), 0));
    expect(withIssues.files[Object.keys(withIssues.files).find((p) => p.endsWith('/documents/plan.md'))!]).toContain('# The plan');
    await t.http
      .post(`/api/companies/${c.id}/export`)
      .send({ include: { issues: 'yes' } })
      .expect(400);
  });

  it('the CEO agent imports into its own company (creates, with activity by the agent)', async () => {
    const { c, ceo } = await seed();
    const ceoKey = (await t.http.post(`/api/agents/${ceo.id}/keys`).send({ name: 'k' }).expect(201)).body.token as string;
    const files: Files = {
      'COMPANY.md': '---\nschema: agentcompanies/v1\nname: Whatever\n---\n',
      'agents/helper/AGENTS.md':
        '---\nname: Helper\nreportsTo: chief\nadapter:\n  type: process\n  config:\n    command: "true"\n---\nHelp.\n',
      'agents/chief/AGENTS.md': '---\nname: Chief\nrole: ceo\n---\n',
    };
    const applied = (
      await t.http
        .post(`/api/companies/${c.id}/imports/apply`)
        .set(bearer(ceoKey))
        .send({ source: { type: 'inline', files }, collisionStrategy: 'skip' })
        .expect(200)
    ).body;
    expect(applied.creates.map((i: { slug: string }) => i.slug)).toEqual(['helper']);
    const helper = (await t.http.get(`/api/agents/${applied.ids.agent.helper}`).expect(200)).body;
    expect(helper.reportsTo).toBe(ceo.id);
    const acts = (await t.http.get(`/api/companies/${c.id}/activity?entityId=${helper.id}`).expect(200)).body;
    expect(acts[0]).toMatchObject({ action: 'agent.created', actorType: 'agent', agentId: ceo.id });
  });

  it('apply is all or nothing: a failure halfway leaves the company unchanged', async () => {
    const { c } = await seed();
    const a = await exportOf(c.id, { issues: true });
    const target = await createCompany(t);
    // a later agent whose adapter configuration its adapter refuses (only apply finds out)
    a.files['agents/zz-broken/AGENTS.md'] = '---\nname: ZZ Broken\nadapter:\n  type: process\n  config:\n    command: 42\n---\nBroken.\n';
    const before = {
      agents: (await t.http.get(`/api/companies/${target.id}/agents`).expect(200)).body.length,
      labels: (await t.http.get(`/api/companies/${target.id}/labels`).expect(200)).body.length,
      activity: (await t.http.get(`/api/companies/${target.id}/activity`).expect(200)).body.length,
    };
    const preview = (
      await t.http
        .post(`/api/companies/${target.id}/imports/preview`)
        .send({ source: { type: 'inline', ...a } })
        .expect(200)
    ).body;
    expect(preview.creates.length).toBeGreaterThan(3);
    const res = await t.http
      .post(`/api/companies/${target.id}/imports/apply`)
      .send({ source: { type: 'inline', ...a } })
      .expect(422);
    expect(res.body).toMatchObject({ code: 'import_failed', file: 'agents/zz-broken/AGENTS.md' });
    expect((await t.http.get(`/api/companies/${target.id}/agents`).expect(200)).body).toHaveLength(before.agents);
    expect((await t.http.get(`/api/companies/${target.id}/labels`).expect(200)).body).toHaveLength(before.labels);
    expect((await t.http.get(`/api/companies/${target.id}/goals`).expect(200)).body).toHaveLength(0);
    expect(
      (await t.http.get(`/api/companies/${target.id}/skills`).expect(200)).body.filter((s: { bundled: boolean }) => !s.bundled),
    ).toHaveLength(0);
    expect((await t.http.get(`/api/companies/${target.id}/activity`).expect(200)).body).toHaveLength(before.activity);
    // into a new company: no company is left behind
    const companies = (await t.http.get('/api/companies').expect(200)).body.length;
    await t.http
      .post('/api/companies/import')
      .send({ source: { type: 'inline', ...a }, target: { mode: 'new_company' } })
      .expect(422);
    expect((await t.http.get('/api/companies').expect(200)).body).toHaveLength(companies);
  });

  describe('bad packages answer 422 naming the file and the problem', () => {
    const base = (): Files => ({
      'COMPANY.md': '---\nschema: agentcompanies/v1\nname: Bad Co\n---\n',
      'agents/ceo/AGENTS.md': '---\nname: CEO\nrole: ceo\n---\nLead.\n',
    });
    const check = async (files: Files, file: string, problem: RegExp) => {
      const c = await createCompany(t);
      const res = await t.http
        .post(`/api/companies/${c.id}/imports/preview`)
        .send({ source: { type: 'inline', files } })
        .expect(422);
      expect(res.body.file).toBe(file);
      expect(res.body.error).toMatch(problem);
      expect(res.body.error).toContain(file);
    };

    it('a valid minimal package previews fine', async () => {
      const c = await createCompany(t);
      const res = await t.http
        .post(`/api/companies/${c.id}/imports/preview`)
        .send({ source: { type: 'inline', files: base() } })
        .expect(200);
      expect(res.body.creates.map((i: { slug: string }) => i.slug)).toEqual(['ceo']);
    });
    it('unknown version', () =>
      check({ ...base(), 'COMPANY.md': '---\nschema: agentcompanies/v9\nname: X\n---\n' }, 'COMPANY.md', /unknown package version/));
    it('invalid YAML', () =>
      check({ ...base(), 'agents/ceo/AGENTS.md': '---\nname: [unclosed\n---\n' }, 'agents/ceo/AGENTS.md', /invalid YAML/));
    it('missing COMPANY.md', () => check({ 'agents/ceo/AGENTS.md': base()['agents/ceo/AGENTS.md'] }, 'COMPANY.md', /missing/));
    it('a reference to a missing slug', () =>
      check(
        { ...base(), 'agents/dev/AGENTS.md': '---\nname: Dev\nreportsTo: nobody\n---\n' },
        'agents/dev/AGENTS.md',
        /missing agent slug "nobody"/,
      ));
    it('a missing project slug in a task', () =>
      check({ ...base(), 'tasks/t1/TASK.md': '---\nname: T\nproject: ghost\n---\n' }, 'tasks/t1/TASK.md', /missing project slug "ghost"/));
    it('a path escaping the package', () => check({ ...base(), '../evil.md': 'x' }, '../evil.md', /escapes the package/));
    it('an absolute path', () => check({ ...base(), '/etc/passwd': 'x' }, '/etc/passwd', /escapes the package/));
    it('an oversized file', () =>
      check({ ...base(), 'agents/big/AGENTS.md': `---\nname: Big\n---\n${'x'.repeat(1024 * 1024 + 1)}` }, 'agents/big/AGENTS.md', /limit/));
    it('an oversized package', async () => {
      const files = base();
      for (let i = 0; i < 70; i++) files[`skills/s${i}/SKILL.md`] = `---\nname: s${i}\n---\n${'y'.repeat(1000 * 1000)}`;
      await check(files, 'package', /limit/);
    });
    it('an org chart cycle', () =>
      check(
        {
          ...base(),
          'agents/a/AGENTS.md': '---\nname: A\nreportsTo: b\n---\n',
          'agents/b/AGENTS.md': '---\nname: B\nreportsTo: a\n---\n',
        },
        'agents/a/AGENTS.md',
        /cycle/,
      ));
  });

  it('imports a package written by hand in the open agentcompanies layout', async () => {
    const files: Files = {
      'COMPANY.md':
        '---\nname: Lean Dev Shop\ndescription: Small engineering-focused AI company\nslug: lean-dev-shop\nschema: agentcompanies/v1\ngoals:\n  - Build and ship software products\nrequirements:\n  secrets:\n    - OPENAI_API_KEY\n---\n',
      'agents/ceo/AGENTS.md':
        '---\nname: CEO\ntitle: Chief Executive Officer\nreportsTo: null\nskills:\n  - review\n---\nYou are the CEO.\n',
      'agents/cto/AGENTS.md': '---\nname: CTO\nreportsTo: ceo\n---\nYou are the CTO.\n',
      'skills/review/SKILL.md': '---\nname: review\ndescription: Paranoid code review skill\n---\nReview.\n',
      'projects/q2-launch/PROJECT.md': '---\nname: Q2 Launch\nowner: cto\n---\nShip the Q2 launch plan.\n',
      'projects/q2-launch/tasks/monday-review/TASK.md': '---\nname: Monday Review\nassignee: ceo\nrecurring: true\n---\nReview the week.\n',
      'tasks/kickoff/TASK.md': '---\nname: Kickoff\nassignee: cto\nproject: q2-launch\n---\nStart.\n',
    };
    const res = await t.http
      .post('/api/companies/import')
      .send({ source: { type: 'inline', rootPath: 'lean', files }, target: { mode: 'new_company' } });
    expect(res.body).toMatchObject({ mode: 'new_company' });
    expect(res.body.secretsToSet).toEqual([{ name: 'OPENAI_API_KEY', description: null, usedBy: ['COMPANY.md'] }]);
    const id = res.body.companyId;
    expect((await t.http.get(`/api/companies/${id}`).expect(200)).body.name).toBe('Lean Dev Shop');
    const agents = (await t.http.get(`/api/companies/${id}/agents`).expect(200)).body as Array<{
      name: string;
      reportsTo: string | null;
      id: string;
    }>;
    expect(agents.find((x) => x.name === 'CTO')!.reportsTo).toBe(agents.find((x) => x.name === 'CEO')!.id);
    expect((await t.http.get(`/api/companies/${id}/routines`).expect(200)).body).toHaveLength(1);
    expect((await t.http.get(`/api/companies/${id}/goals`).expect(200)).body.map((g: { title: string }) => g.title)).toEqual([
      'Build and ship software products',
    ]);
    const issues = (await t.http.get(`/api/companies/${id}/issues`).expect(200)).body;
    expect((Array.isArray(issues) ? issues : issues.items).map((i: { title: string }) => i.title)).toEqual(['Kickoff']);
  });
});
