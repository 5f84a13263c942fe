import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createDoc, PNG_1x1, upload } from '../support/documents';
import { createCompany } from '../support/factories';
import { createIssue } from '../support/issues';
import { createGoal, createProject, createWorkspace } from '../support/projects';
import { sqlAgent, sqlRun } from '../support/sql';
import { startService } from '../support/service-process';
import { createTestApp, createTestDatabase, TestApp } from '../support/test-app';

type Kind =
  | 'agent'
  | 'issue'
  | 'project'
  | 'goal'
  | 'workspace'
  | 'label'
  | 'comment'
  | 'run'
  | 'cost_event'
  | 'attachment'
  | 'asset'
  | 'document_revision'
  | 'folder';

/** What each id-holding body field names (by field name; `parentId` depends on the route). */
function kindOf(field: string, path: string): Kind | null {
  if (field === 'parentId') return path.includes('/goals') ? 'goal' : path.includes('/folders') ? 'folder' : 'issue';
  const map: Record<string, Kind> = {
    agentId: 'agent',
    reportsTo: 'agent',
    ownerAgentId: 'agent',
    leadAgentId: 'agent',
    agentOrder: 'agent',
    issueId: 'issue',
    sourceIssueId: 'issue',
    sourceIssueIds: 'issue',
    parentIssueId: 'issue',
    blockedByIssueIds: 'issue',
    inheritExecutionWorkspaceFromIssueId: 'issue',
    projectId: 'project',
    projectIds: 'project',
    workspaceIds: 'workspace',
    projectOrder: 'project',
    goalId: 'goal',
    goalIds: 'goal',
    labelIds: 'label',
    executionWorkspaceId: 'workspace',
    heartbeatRunId: 'run',
    costEventId: 'cost_event',
    attachmentId: 'attachment',
    issueCommentId: 'comment',
    logoAssetId: 'asset',
    baseRevisionId: 'document_revision',
    folderId: 'folder',
  };
  return map[field] ?? null;
}

/**
 * Body fields holding ids that are not references to a record of the route's company, with why.
 * Everything else that looks like an id must be refused with 422 invalid_reference.
 */
const NOT_COMPANY_REFERENCES: Record<string, string> = {
  assigneeAgentId: "another company's or a terminated assignee is a company-boundary denial (403 deny_company_boundary, issue 17)",
  assigneeUserId: 'users are not company-owned records',
  companyId: 'names the company itself (instance admin grants, joins), checked by access rules',
  companyOrder: "the caller's own companies (global sidebar), checked by the preferences service",
  scopeId: 'its kind depends on scopeType; the budgets service checks it',
  originId: 'free-form origin reference, not a record id',
  actorId: 'free-form actor label of an imported activity record',
  entityId: 'free-form entity id of an imported activity record',
  userId: 'users are not company-owned records',
  principalId: 'users or agents per principalType, checked by the access service',
  secretId: 'secret references are validated with their binding (invalid_secret_reference)',
  resourceId: 'the kind depends on resourceType',
  environmentId: "the board UI's label of the environment a runtime login is for, not a record id (echoed back only)",
  targetId: 'its kind depends on targetType (feedback traces); the feedback service answers 422 invalid_reference itself',
  catalogSkillId: 'an entry of the instance-wide skill catalog, not a company record',
  itemId: 'a routine or skill per `kind` (folders); the folders service answers 404 for an item the company does not have',
  optionId: "the key of one of the question's options (issue interactions), not a record id",
  secretsCompanyId: 'names a company on an instance-admin plugin route (no company in the path); the plugins service checks it exists',
  connectionId:
    "an AI or tool connection, looked up in the route's company by its service (another company's: 404 ai_connection_not_found, 422 invalid_reference; ai-connections and tool-gateway specs)",
  grantId: "an AI connection (the board UI's name for it), looked up in the route's company (404; ai-connections spec)",
  loginSessionId: 'a browser sign-in session, not supported: refused with 422 login_method_unsupported',
  applicationId: "a tool application, looked up in the route's company by the tools service (422 invalid_reference)",
  catalogEntryId: "a tool of a connection's catalog, looked up in the route's company by the tools service (422 invalid_reference)",
  definitionId:
    "a user secret definition, looked up in the route's company by the user secrets service (another company's: 404; secret-vault spec)",
};

/** The keys of a wake payload that name records. */
const PAYLOAD_KEYS: Record<string, Kind> = {
  issueId: 'issue',
  commentId: 'comment',
  projectId: 'project',
  goalId: 'goal',
  agentId: 'agent',
};

interface Case {
  method: string;
  path: string;
  field: string;
  kind: Kind;
  array: boolean;
  nested?: string;
}

/** Every JSON request-body field of a mutating route that holds an id, from the OpenAPI document. */
function idFields(doc: any): { cases: Case[]; unknown: string[] } {
  const cases: Case[] = [];
  const unknown: string[] = [];
  const resolve = (s: any): any => (s?.$ref ? resolve(doc.components.schemas[s.$ref.split('/').pop()]) : s);
  const props = (s: any): Record<string, any> => {
    const r = resolve(s);
    return { ...(r?.allOf ?? []).reduce((a: any, x: any) => ({ ...a, ...props(x) }), {}), ...(r?.properties ?? {}) };
  };
  for (const [path, ops] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) {
      const schema = op.requestBody?.content?.['application/json']?.schema;
      if (!schema) continue;
      for (const [field, raw] of Object.entries<any>(props(schema))) {
        const p = resolve(raw);
        const isArray = p?.type === 'array';
        const item = isArray ? resolve(p.items) : p;
        const looksLikeId =
          item?.format === 'uuid' ||
          (/(Id|Ids)$/.test(field) && (item?.type === 'string' || item?.type === undefined)) ||
          field === 'reportsTo' ||
          /Order$/.test(field);
        if (field === 'payload' && path.endsWith('/wakeup')) {
          for (const [key, kind] of Object.entries(PAYLOAD_KEYS))
            cases.push({ method, path, field: `payload.${key}`, kind, array: false, nested: key });
          continue;
        }
        if (!looksLikeId || NOT_COMPANY_REFERENCES[field]) continue;
        const kind = kindOf(field, path);
        if (!kind) unknown.push(`${method.toUpperCase()} ${path} ${field}`);
        else cases.push({ method, path, field, kind, array: isArray });
      }
    }
  }
  return { cases, unknown };
}

describe("every id in a request body belongs to the route's company (422 invalid_reference)", () => {
  let t: TestApp;
  let openapi: any;
  const mine: Record<string, string> = {};
  const theirs: Record<Kind, string> = {} as Record<Kind, string>;

  /** One record of each kind in a company. */
  async function records(companyId: string): Promise<Record<Kind, string>> {
    const agent = await sqlAgent(t, companyId, {});
    const project = await createProject(t, companyId);
    const goal = await createGoal(t, companyId);
    const issue = await createIssue(t, companyId, { title: 'Reference target' });
    const workspace = await createWorkspace(t, project.id);
    const label = (
      await t.http
        .post(`/api/companies/${companyId}/labels`)
        .send({ name: `l-${Math.random().toString(36).slice(2, 8)}`, color: '#112233' })
        .expect(201)
    ).body;
    const comment = (await t.http.post(`/api/issues/${issue.id}/comments`).send({ body: 'hello' }).expect(201)).body;
    const run = await sqlRun(t, companyId, agent.id);
    const cost = (
      await t.http
        .post(`/api/companies/${companyId}/cost-events`)
        .send({ agentId: agent.id, provider: 'p', model: 'm', costCents: 1, occurredAt: new Date().toISOString() })
        .expect(201)
    ).body;
    const attachment = (await upload(t, companyId, issue.id, 'a.txt', 'text/plain', 'x').expect(201)).body;
    const logo = (
      await t.http
        .post(`/api/companies/${companyId}/logo`)
        .attach('file', PNG_1x1, { filename: 'l.png', contentType: 'image/png' })
        .expect(201)
    ).body;
    const revision = await createDoc(t, issue.id, 'plan', 'Plan body');
    const folder = (await t.http.post(`/api/companies/${companyId}/folders`).send({ kind: 'routine', name: 'Refs' }).expect(201)).body;
    return {
      agent: agent.id,
      issue: issue.id,
      project: project.id,
      goal: goal.id,
      workspace: workspace.id,
      label: label.id,
      comment: comment.id,
      run,
      cost_event: cost.id,
      attachment: attachment.id,
      asset: logo.assetId,
      document_revision: revision.id,
      folder: folder.id,
    };
  }

  beforeAll(async () => {
    // the OpenAPI document of the built service: its DTO fields come from the swagger compiler plugin (not run by jest's transform)
    const svc = await startService({
      DATABASE_URL: await createTestDatabase(),
      SERVICE_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'refs-openapi-')),
    });
    try {
      openapi = (await svc.api('GET', '/api/openapi.json')).body;
    } finally {
      await svc.stop();
    }
    t = await createTestApp();
    const a = await createCompany(t);
    const b = await createCompany(t);
    const ra = await records(a.id);
    Object.assign(theirs, await records(b.id));
    const routine = (await t.http.post(`/api/companies/${a.id}/routines`).send({ title: 'Daily', assigneeAgentId: ra.agent }).expect(201))
      .body;
    const product = (
      await t.http
        .post(`/api/issues/${ra.issue}/work-products`)
        .send({ type: 'artifact', title: 'Out', url: 'https://example.test/x' })
        .expect(201)
    ).body;
    Object.assign(mine, { routineId: routine.id, workProductId: product.id });
    Object.assign(mine, {
      companyId: a.id,
      agentId: ra.agent,
      issueId: ra.issue,
      projectId: ra.project,
      goalId: ra.goal,
      workspaceId: ra.workspace,
      labelId: ra.label,
      commentId: ra.comment,
      runId: ra.run,
      attachmentId: ra.attachment,
      folderId: ra.folder,
      key: 'plan',
    });
  }, 300_000);
  afterAll(() => t.close());

  /** A path of company A: ids by parameter name, `{id}` by the collection before it. */
  function fill(path: string): string | null {
    const segments = path.split('/');
    let ok = true;
    const out = segments.map((seg, i) => {
      const m = /^\{(\w+)\}$/.exec(seg);
      if (!m) return seg;
      const name = m[1] === 'id' ? `${segments[i - 1].replace(/s$/, '')}Id` : m[1];
      const v = mine[name] ?? (name.endsWith('Id') ? undefined : 'x');
      if (!v) ok = false;
      return v ?? seg;
    });
    return ok ? out.join('/') : null;
  }

  it("walks every id field of every request body with another company's id", async () => {
    const { cases, unknown } = idFields(openapi);
    expect(unknown).toEqual([]); // a new id field needs a kind here (and @RefersTo on its DTO)
    // the fields the defect report named are among those walked
    const walked = new Set(cases.map((c) => `${c.method.toUpperCase()} ${c.path} ${c.field}`));
    for (const must of [
      'POST /api/companies/{companyId}/issues executionWorkspaceId',
      'PATCH /api/issues/{issueId} executionWorkspaceId',
      'POST /api/companies/{companyId}/cost-events issueId',
      'POST /api/agents/{agentId}/wakeup payload.issueId',
      'POST /api/companies/{companyId}/agent-hires sourceIssueId',
      'POST /api/companies/{companyId}/agent-hires sourceIssueIds',
      'POST /api/companies/{companyId}/activity agentId',
    ])
      expect(walked).toContain(must);

    const failures: string[] = [];
    const skipped: string[] = [];
    for (const c of cases) {
      const url = fill(c.path);
      if (!url) {
        skipped.push(`${c.method.toUpperCase()} ${c.path}`);
        continue;
      }
      const foreign = theirs[c.kind];
      const value = c.array ? [foreign] : foreign;
      const body = c.nested ? { payload: { [c.nested]: value } } : { [c.field]: value };
      const res = await (t.http as any)[c.method](url).send(body);
      if (res.status !== 422 || res.body.code !== 'invalid_reference' || res.body.field !== c.field) {
        failures.push(`${c.method.toUpperCase()} ${c.path} ${c.field}: ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(skipped).toEqual([]);
    expect(cases.length).toBeGreaterThan(30);
  });

  it("accepts the same fields with ids of the route's own company (spot checks)", async () => {
    const issue = await t.http.patch(`/api/issues/${mine.issueId}`).send({ executionWorkspaceId: mine.workspaceId });
    expect(issue.status).toBe(200);
    expect(issue.body.executionWorkspaceId).toBe(mine.workspaceId);
    await t.http
      .post(`/api/companies/${mine.companyId}/cost-events`)
      .send({ agentId: mine.agentId, issueId: mine.issueId, provider: 'p', model: 'm', costCents: 1, occurredAt: new Date().toISOString() })
      .expect(201);
    await t.http
      .post(`/api/companies/${mine.companyId}/activity`)
      .send({
        actorType: 'system',
        actorId: 'import',
        action: 'x.imported',
        entityType: 'issue',
        entityId: mine.issueId,
        agentId: mine.agentId,
      })
      .expect(201);
  });
});
