import type { AuthzAction } from '../authorization/authorization.types';
import { ISSUE_PRIORITIES, ISSUE_STATUSES } from '../issues/issue.types';

/**
 * The service's own API as MCP tools. Each tool stands for one or more REST routes and is carried
 * out by calling those routes (McpRouteCaller): the same validation, authorization, activity
 * records and errors as the REST API, by construction. A tool names who may see it:
 *
 * - `run`: an agent in a heartbeat run (its run token, or its key with a verified X-Service-Run-Id);
 * - `agent`: an agent key without a run (a person's own coding assistant acting as that agent);
 * - `board`: a board user (session, board token, or the local board of a local trusted instance).
 *
 * `tools/list` shows a caller only the tools of its kind, and each tool's routes accept that kind
 * (test/e2e/mcp.e2e-spec.ts holds the tools to the routes' declared callers). A tool whose routes
 * make an authorization decision beyond the caller's kind names it (`authority`): it is listed only
 * when that decision allows the caller the action for some target (AuthorizationService.allowsSome).
 * Calling a tool that is not listed is answered by its route as any REST call is.
 */
export type ToolAudience = 'run' | 'agent' | 'board';

/** Who is calling, as the tools need it. */
export interface ToolCaller {
  audience: ToolAudience;
  agentId?: string;
  companyId?: string;
  runId?: string;
}

export interface RouteRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH';
  url: string;
  body?: Record<string, unknown>;
}

export type JsonSchema = Record<string, unknown>;
export type ToolArgs = Record<string, unknown>;

export interface ServiceTool {
  name: string;
  title: string;
  description: string;
  audiences: ToolAudience[];
  /** board callers name the company (`companyId`); agents act in their own */
  companyScoped?: boolean;
  properties: Record<string, JsonSchema>;
  required?: string[];
  readOnly?: boolean;
  /** the decision its routes make beyond the caller's kind (e.g. `issue.assign`: tasks:assign, the manager chain, a member's role) */
  authority?: AuthzAction;
  /** the routes the call makes, in order; the result is `combine` of their answers (default: the last) */
  requests(args: ToolArgs, caller: ToolCaller): RouteRequest[];
  combine?(bodies: unknown[]): unknown;
}

const uuid = (description: string): JsonSchema => ({ type: 'string', format: 'uuid', description });
const text = (description: string, maxLength?: number): JsonSchema => ({
  type: 'string',
  description,
  ...(maxLength ? { maxLength } : {}),
});
const ISSUE_REF = text('the issue: its id (UUID) or its identifier, e.g. ENG-42', 100);
const STATUS: JsonSchema = { type: 'string', enum: [...ISSUE_STATUSES] };
const PRIORITY: JsonSchema = { type: 'string', enum: [...ISSUE_PRIORITIES] };
const LIMIT: JsonSchema = { type: 'integer', minimum: 1, maximum: 200, description: 'at most this many (default 50)' };

const enc = encodeURIComponent;
const str = (v: unknown): string => (typeof v === 'string' ? v : String(v ?? ''));
/** The company a call acts in: the agent's own, or the board caller's `companyId` argument. */
const company = (args: ToolArgs, c: ToolCaller): string => enc(c.audience === 'board' ? str(args.companyId) : (c.companyId ?? ''));

/** A query string of the defined arguments among `keys`. */
function query(args: ToolArgs, keys: string[], extra: Record<string, string> = {}): string {
  const q = new URLSearchParams(extra);
  for (const k of keys) if (args[k] !== undefined && args[k] !== null) q.set(k, str(args[k]));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The body fields among `keys` that the caller gave. */
function pick(args: ToolArgs, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => args[k] !== undefined).map((k) => [k, args[k]]));
}

const ISSUE_FIELDS = ['title', 'description', 'status', 'priority', 'projectId', 'goalId', 'parentId', 'blockedByIssueIds'];
const ISSUE_PROPERTIES: Record<string, JsonSchema> = {
  title: text('a short title', 500),
  description: text('what is to be done (markdown)'),
  status: STATUS,
  priority: PRIORITY,
  projectId: uuid('the project, if any'),
  goalId: uuid('the goal, if any'),
  parentId: text('the parent issue (id or identifier)', 100),
  blockedByIssueIds: { type: 'array', items: { type: 'string' }, description: 'issues that must be done first' },
};

export const SERVICE_TOOLS: ServiceTool[] = [
  {
    name: 'whoami',
    title: 'Who am I',
    description:
      'Your agent record (name, role, title, capabilities, reportsTo), your chain of command and whether you may assign tasks. Call it first.',
    audiences: ['run', 'agent'],
    properties: {},
    readOnly: true,
    requests: () => [{ method: 'GET', url: '/api/agents/me' }],
  },
  {
    name: 'inbox',
    title: 'My inbox',
    description:
      'The issues assigned to you with their status, priority and whether their blockers are done (dependencyReady). Work the woken issue first, then in_progress ones, then todo ones that are dependencyReady.',
    audiences: ['run', 'agent'],
    properties: {},
    readOnly: true,
    requests: () => [{ method: 'GET', url: '/api/agents/me/inbox-lite' }],
  },
  {
    name: 'checkout_issue',
    title: 'Check out an issue',
    description:
      'Take an issue for this run before working on it (moves it to in_progress). A 409 error means someone else holds it, or it is not in an expected status: pick other work.',
    audiences: ['run'],
    properties: {
      issueId: ISSUE_REF,
      expectedStatuses: { type: 'array', items: STATUS, description: 'default: todo, backlog, in_progress' },
    },
    required: ['issueId'],
    requests: (a, c) => [
      {
        method: 'POST',
        url: `/api/issues/${enc(str(a.issueId))}/checkout`,
        body: { agentId: c.agentId, expectedStatuses: a.expectedStatuses ?? ['todo', 'backlog', 'in_progress'] },
      },
    ],
  },
  {
    name: 'release_issue',
    title: 'Release an issue',
    description: 'Give an issue you checked out back (when you stop before finishing it), so another run can take it.',
    audiences: ['run'],
    properties: { issueId: ISSUE_REF },
    required: ['issueId'],
    requests: (a) => [{ method: 'POST', url: `/api/issues/${enc(str(a.issueId))}/release` }],
  },
  {
    name: 'read_issue',
    title: 'Read an issue with its context',
    description:
      'The issue, its ancestors, project and goal, attachments, the comment that woke you, and its comments (oldest first; pass commentsAfter, the last comment id you saw, to get only newer ones).',
    audiences: ['run', 'agent', 'board'],
    properties: {
      issueId: ISSUE_REF,
      commentsAfter: uuid('only comments after this comment'),
      commentLimit: { type: 'integer', minimum: 1, maximum: 500, description: 'at most this many comments (default 100)' },
    },
    required: ['issueId'],
    readOnly: true,
    requests: (a) => [
      { method: 'GET', url: `/api/issues/${enc(str(a.issueId))}/heartbeat-context` },
      {
        method: 'GET',
        url: `/api/issues/${enc(str(a.issueId))}/comments${query({ after: a.commentsAfter, limit: a.commentLimit ?? 100 }, ['after', 'limit'], { order: 'asc' })}`,
      },
    ],
    combine: ([context, comments]) => ({ ...(context as Record<string, unknown>), comments }),
  },
  {
    name: 'list_issues',
    title: 'List issues',
    description: 'Issues of the company, newest activity first, filtered by status (comma-separated), assignee, project, parent or text.',
    audiences: ['run', 'agent', 'board'],
    companyScoped: true,
    properties: {
      status: text('e.g. todo,in_progress', 200),
      assigneeAgentId: uuid('only issues assigned to this agent'),
      projectId: uuid('only issues of this project'),
      parentId: uuid('only children of this issue'),
      q: text('text search in identifier, title and description', 500),
      limit: LIMIT,
    },
    readOnly: true,
    requests: (a, c) => [
      {
        method: 'GET',
        url: `/api/companies/${company(a, c)}/issues${query({ limit: 50, ...a }, ['status', 'assigneeAgentId', 'projectId', 'parentId', 'q', 'limit'])}`,
      },
    ],
  },
  {
    name: 'add_comment',
    title: 'Comment on an issue',
    description:
      'Add a comment (markdown) to an issue: progress, questions, answers. @Name of an agent wakes that agent; mention only when you need them.',
    audiences: ['run', 'agent', 'board'],
    properties: {
      issueId: ISSUE_REF,
      body: text('the comment (markdown)', 100_000),
      reopen: { type: 'boolean', description: 'a done or cancelled issue moves to todo' },
    },
    required: ['issueId', 'body'],
    requests: (a) => [{ method: 'POST', url: `/api/issues/${enc(str(a.issueId))}/comments`, body: pick(a, ['body', 'reopen']) }],
  },
  {
    name: 'update_issue',
    title: 'Update an issue',
    description:
      'Change an issue: status (in_review, blocked, done, …), priority, title, description, with an optional comment in the same call. Set done (or in_review) with a closing comment when finished; blocked with what you wait for.',
    audiences: ['run', 'agent', 'board'],
    properties: {
      issueId: ISSUE_REF,
      status: STATUS,
      priority: PRIORITY,
      title: text('a new title', 500),
      description: text('a new description (markdown)'),
      comment: text('a comment added with the change'),
      blockedByIssueIds: ISSUE_PROPERTIES.blockedByIssueIds,
    },
    required: ['issueId'],
    requests: (a) => [
      {
        method: 'PATCH',
        url: `/api/issues/${enc(str(a.issueId))}`,
        body: pick(a, ['status', 'priority', 'title', 'description', 'comment', 'blockedByIssueIds']),
      },
    ],
  },
  {
    name: 'assign_issue',
    title: 'Assign an issue',
    description:
      'Assign an issue to an agent (assigneeAgentId) or a person (assigneeUserId); null unassigns. Needs authority to assign: a 403 names why not.',
    audiences: ['run', 'agent', 'board'],
    authority: 'issue.assign',
    properties: {
      issueId: ISSUE_REF,
      assigneeAgentId: { type: ['string', 'null'], format: 'uuid', description: 'the agent to assign' },
      assigneeUserId: { type: ['string', 'null'], description: 'the person to assign' },
      comment: text('a comment added with the change'),
    },
    required: ['issueId'],
    requests: (a) => [
      { method: 'PATCH', url: `/api/issues/${enc(str(a.issueId))}`, body: pick(a, ['assigneeAgentId', 'assigneeUserId', 'comment']) },
    ],
  },
  {
    name: 'write_document',
    title: 'Write an issue document',
    description:
      'Create or replace a document of an issue under a key (e.g. plan, design, report), markdown. To change an existing one pass the baseRevisionId you read; a 409 means it changed since: read it again and merge.',
    audiences: ['run', 'agent', 'board'],
    properties: {
      issueId: ISSUE_REF,
      key: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,63}$', description: 'the document key, e.g. plan' },
      title: text('the document title', 500),
      body: text('the document (markdown, up to 512 KiB)'),
      changeSummary: text('what changed', 2000),
      baseRevisionId: uuid('the latest revision id, when updating'),
    },
    required: ['issueId', 'key', 'body'],
    requests: (a) => [
      {
        method: 'PUT',
        url: `/api/issues/${enc(str(a.issueId))}/documents/${enc(str(a.key))}`,
        body: { format: 'markdown', ...pick(a, ['title', 'body', 'changeSummary', 'baseRevisionId']) },
      },
    ],
  },
  {
    name: 'delegate_issue',
    title: 'Delegate a child issue',
    description:
      'Split off work: create a child issue of parentId assigned to a colleague (find them with list_agents). Assigning needs authority (your manager chain, a grant, or the CEO role): a 403 names why not.',
    audiences: ['run'],
    authority: 'issue.assign',
    properties: { ...ISSUE_PROPERTIES, assigneeAgentId: uuid('the agent who does it'), status: { ...STATUS, description: 'default todo' } },
    required: ['title', 'parentId', 'assigneeAgentId'],
    requests: (a, c) => [
      {
        method: 'POST',
        url: `/api/companies/${company(a, c)}/issues`,
        body: { status: 'todo', ...pick(a, [...ISSUE_FIELDS, 'assigneeAgentId']) },
      },
    ],
  },
  {
    name: 'create_issue',
    title: 'Create an issue',
    description: 'Create an issue in the company, optionally assigned to an agent (assigneeAgentId) or a person (assigneeUserId).',
    audiences: ['agent', 'board'],
    companyScoped: true,
    properties: { ...ISSUE_PROPERTIES, assigneeAgentId: uuid('the agent to assign'), assigneeUserId: text('the person to assign', 200) },
    required: ['title'],
    requests: (a, c) => [
      {
        method: 'POST',
        url: `/api/companies/${company(a, c)}/issues`,
        body: pick(a, [...ISSUE_FIELDS, 'assigneeAgentId', 'assigneeUserId']),
      },
    ],
  },
  {
    name: 'list_agents',
    title: 'List agents',
    description: 'The agents of the company (id, name, role, title, status, reportsTo): whom to delegate to or mention.',
    audiences: ['run', 'agent', 'board'],
    companyScoped: true,
    properties: {},
    readOnly: true,
    requests: (a, c) => [{ method: 'GET', url: `/api/companies/${company(a, c)}/agents` }],
  },
  {
    name: 'report_cost',
    title: 'Report a cost',
    description:
      'Report what a model or another paid service you called during this run cost (your CLI’s own model calls are booked by the service: do not report those).',
    audiences: ['run'],
    properties: {
      provider: text('e.g. openai', 200),
      model: text('the model', 200),
      costCents: { type: 'integer', minimum: 0, description: 'the cost in cents' },
      inputTokens: { type: 'integer', minimum: 0 },
      outputTokens: { type: 'integer', minimum: 0 },
      issueId: uuid('the issue the spend was for'),
      occurredAt: { type: 'string', format: 'date-time', description: 'default: now' },
    },
    required: ['provider', 'model', 'costCents'],
    requests: (a, c) => [
      {
        method: 'POST',
        url: `/api/companies/${company(a, c)}/cost-events`,
        body: {
          agentId: c.agentId,
          heartbeatRunId: c.runId,
          occurredAt: a.occurredAt ?? new Date().toISOString(),
          ...pick(a, ['provider', 'model', 'costCents', 'inputTokens', 'outputTokens', 'issueId']),
        },
      },
    ],
  },
  {
    name: 'ask_board',
    title: 'Ask the board a question',
    description:
      'Ask a person of the board a question on an issue (markdown), optionally with options to pick from. You are woken with the answer: do not wait for it, stop or go on with other work.',
    audiences: ['run'],
    properties: {
      issueId: ISSUE_REF,
      prompt: text('the question (markdown)', 20_000),
      options: {
        type: 'array',
        maxItems: 20,
        items: {
          type: 'object',
          properties: { id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' }, label: { type: 'string', maxLength: 500 } },
          required: ['id', 'label'],
        },
      },
      allowFreeText: { type: 'boolean', description: 'whether a free-text answer is accepted (default true without options)' },
    },
    required: ['issueId', 'prompt'],
    requests: (a) => [
      { method: 'POST', url: `/api/issues/${enc(str(a.issueId))}/interactions`, body: pick(a, ['prompt', 'options', 'allowFreeText']) },
    ],
  },
  {
    name: 'request_approval',
    title: 'Request the board’s approval',
    description:
      'Ask the board to approve or reject what you propose (markdown: what, why, the risk). You are woken with the decision: do not wait for it.',
    audiences: ['run'],
    properties: { issueId: ISSUE_REF, request: text('what you ask approval for (markdown)', 20_000) },
    required: ['issueId', 'request'],
    requests: (a) => [
      {
        method: 'POST',
        url: `/api/issues/${enc(str(a.issueId))}/interactions`,
        body: {
          prompt: a.request,
          options: [
            { id: 'approve', label: 'Approve' },
            { id: 'reject', label: 'Reject' },
          ],
          allowFreeText: true,
        },
      },
    ],
  },
  {
    name: 'list_companies',
    title: 'List companies',
    description: 'The companies you have access to (id, name, issue prefix): the companyId the other tools take.',
    audiences: ['board'],
    properties: {},
    readOnly: true,
    requests: () => [{ method: 'GET', url: '/api/companies' }],
  },
  {
    name: 'list_runs',
    title: 'List heartbeat runs',
    description: 'Recent heartbeat runs of the company, newest first (status, agent, issue, usage, error).',
    audiences: ['agent', 'board'],
    companyScoped: true,
    properties: {
      agentId: uuid('only runs of this agent'),
      issueId: uuid('only runs for this issue'),
      status: { type: 'string', enum: ['queued', 'running', 'succeeded', 'failed', 'cancelled', 'timed_out'] },
      limit: LIMIT,
    },
    readOnly: true,
    requests: (a, c) => [
      {
        method: 'GET',
        url: `/api/companies/${company(a, c)}/heartbeat-runs${query({ limit: 50, ...a }, ['agentId', 'issueId', 'status', 'limit'])}`,
      },
    ],
  },
  {
    name: 'get_run',
    title: 'Read a heartbeat run',
    description: 'One heartbeat run: status, timing, usage, result and error.',
    audiences: ['agent', 'board'],
    properties: { runId: uuid('the run') },
    required: ['runId'],
    readOnly: true,
    requests: (a) => [{ method: 'GET', url: `/api/heartbeat-runs/${enc(str(a.runId))}` }],
  },
  {
    name: 'cost_summary',
    title: 'Costs',
    description:
      'The company’s spend against its budget and the spend per agent, for a period (from inclusive, to exclusive; default all time).',
    audiences: ['agent', 'board'],
    companyScoped: true,
    properties: { from: { type: 'string', format: 'date-time' }, to: { type: 'string', format: 'date-time' } },
    readOnly: true,
    requests: (a, c) => [
      { method: 'GET', url: `/api/companies/${company(a, c)}/costs/summary${query(a, ['from', 'to'])}` },
      { method: 'GET', url: `/api/companies/${company(a, c)}/costs/by-agent${query(a, ['from', 'to'])}` },
    ],
    combine: ([summary, byAgent]) => ({ summary, byAgent }),
  },
];

/** The tool's input schema for this caller (board callers name the company). */
export function inputSchemaFor(tool: ServiceTool, audience: ToolAudience): JsonSchema {
  const boardCompany = tool.companyScoped && audience === 'board';
  const properties = boardCompany ? { companyId: uuid('the company (see list_companies)'), ...tool.properties } : tool.properties;
  const required = [...(boardCompany ? ['companyId'] : []), ...(tool.required ?? [])];
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
}
