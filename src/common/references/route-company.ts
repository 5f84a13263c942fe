import { Injectable } from '@nestjs/common';
import type { RouteRecords } from '../auth/auth-registry.port';
import { isUuid } from '../http/uuid';
import { RecordCompanyResolvers } from './record-company-resolvers.port';
import type { ReferenceKind } from './refers-to.decorator';

/** Path parameters that name a company-owned record, and so the route's company. */
export const PARAM_KINDS: Record<string, ReferenceKind> = {
  agentId: 'agent',
  issueId: 'issue',
  projectId: 'project',
  goalId: 'goal',
  runId: 'run',
  workspaceId: 'workspace',
  labelId: 'label',
  commentId: 'comment',
  routineId: 'routine',
  triggerId: 'routine_trigger',
  connectionId: 'tool_connection',
  profileId: 'tool_profile',
  entryId: 'tool_profile_entry',
  inviteId: 'invite',
  approvalId: 'approval',
  secretId: 'secret',
  attachmentId: 'attachment',
  assetId: 'asset',
};

/**
 * Parameters whose name alone does not say what they name (`:requestId` is a join request on other
 * routes): the kind of the record, by the route's path up to the parameter (after the `/api` prefix).
 */
export const ROUTE_PARAM_KINDS: Record<string, ReferenceKind> = {
  '/tool-gateway/action-requests/:requestId': 'tool_action_request',
};

/**
 * Kinds a path may also name by their key (RECORD_KEYS of the owner map), with its form and how it
 * is stored: an issue by its identifier, `ABC-12` in any case. Identifiers are unique across the
 * instance (issue prefixes are), so one names at most one issue of all companies.
 */
export const KEY_FORMS: Partial<Record<ReferenceKind, { pattern: RegExp; stored: (key: string) => string }>> = {
  issue: { pattern: /^[A-Za-z0-9]+-\d+$/, stored: (key) => key.toUpperCase() },
};

/** `/<collection>/:id` */
export const COLLECTION_KINDS: Record<string, ReferenceKind> = {
  agents: 'agent',
  issues: 'issue',
  projects: 'project',
  goals: 'goal',
  'heartbeat-runs': 'run',
  workspaces: 'workspace',
  labels: 'label',
  comments: 'comment',
  routines: 'routine',
  'routine-triggers': 'routine_trigger',
  approvals: 'approval',
  secrets: 'secret',
  attachments: 'attachment',
  'execution-workspaces': 'workspace',
  'cost-events': 'cost_event',
  assets: 'asset',
};

/** What an unknown record of each kind is called in a 404 (as the handlers name it). */
export const KIND_LABELS: Record<ReferenceKind, string> = {
  agent: 'Agent',
  issue: 'Issue',
  project: 'Project',
  goal: 'Goal',
  workspace: 'Workspace',
  label: 'Label',
  comment: 'Comment',
  run: 'Heartbeat run',
  cost_event: 'Cost event',
  attachment: 'Attachment',
  asset: 'Asset',
  secret: 'Secret',
  routine: 'Routine',
  routine_trigger: 'Routine trigger',
  tool_connection: 'Tool connection',
  tool_profile: 'Tool profile',
  tool_profile_entry: 'Tool profile entry',
  invite: 'Invite',
  approval: 'Approval',
  document_revision: 'Revision',
  folder: 'Folder',
  tool_action_request: 'Action request',
};

const MAX_CACHED = 50_000;

/**
 * The company of a route without `:companyId`, from the records its path names (the guard asks
 * this once per request and answers 404 for an unknown record and another company's alike).
 *
 * Records never change company, so a company found is remembered per record id (a deleted record
 * then still maps to its company: its handler answers the same 404). Absence is never remembered,
 * nor the company of a key: an identifier is free again once its company is deleted.
 */
@Injectable()
export class RouteCompanyResolver implements RouteRecords {
  private readonly known = new Map<string, string>();

  constructor(private readonly resolvers: RecordCompanyResolvers) {}

  /**
   * The record parameters of a route, each with its kind: uuid values of mapped names (PARAM_KINDS,
   * ROUTE_PARAM_KINDS, `:id` of a known collection), and values in the form of a kind's key
   * (`byKey`: an issue identifier, as stored). Other values name nothing here: the handler answers them.
   */
  recordsOf(params: Record<string, string>, routeUrl: string | undefined): Array<{ kind: ReferenceKind; id: string; byKey?: true }> {
    const out: Array<{ kind: ReferenceKind; id: string; byKey?: true }> = [];
    const url = routeUrl ?? '';
    const segments = url.split('/');
    for (const [name, value] of Object.entries(params)) {
      const kind =
        PARAM_KINDS[name] ??
        routeParamKind(url, name) ??
        (name === 'id' ? COLLECTION_KINDS[segments[segments.indexOf(':id') - 1] ?? ''] : undefined);
      if (!kind || typeof value !== 'string') continue;
      const key = KEY_FORMS[kind];
      if (isUuid(value)) out.push({ kind, id: value.toLowerCase() });
      else if (key?.pattern.test(value)) out.push({ kind, id: key.stored(value), byKey: true });
    }
    return out;
  }

  /**
   * For a route without `:companyId`: undefined when its path names no record; else the company
   * all named records belong to, or `{ companyId: null, label }` when one is unknown or they
   * disagree (answered as the first unknown one: 404 with the kind's label). When records before
   * the unknown one resolved, `within` names their company and the first one's label: a caller who
   * cannot reach that company gets the 404 of the first record (an unknown comment of another
   * company's issue answers like a known one).
   */
  async resolve(
    params: Record<string, string>,
    routeUrl: string | undefined,
  ): Promise<{ companyId: string | null; label: string; within?: { companyId: string; label: string } } | undefined> {
    const records = this.recordsOf(params, routeUrl);
    if (!records.length) return undefined;
    let company: string | null = null;
    for (const r of records) {
      const key = `${r.kind}:${r.id}`;
      let owner: string | null | undefined = r.byKey ? await this.resolvers.companyOfKey(r.kind, r.id) : this.known.get(key);
      if (owner === undefined) {
        owner = await this.resolvers.companyOf(r.kind, r.id);
        if (owner) {
          if (this.known.size >= MAX_CACHED) this.known.clear();
          this.known.set(key, owner.toLowerCase());
        }
      }
      if (!owner || (company !== null && owner.toLowerCase() !== company)) {
        const within = company === null ? undefined : { companyId: company, label: KIND_LABELS[records[0].kind] };
        return { companyId: null, label: KIND_LABELS[r.kind], within };
      }
      company = owner.toLowerCase();
    }
    return { companyId: company, label: KIND_LABELS[records[0].kind] };
  }
}

/** The kind ROUTE_PARAM_KINDS gives a parameter of this route, by the path up to it. */
function routeParamKind(routeUrl: string, name: string): ReferenceKind | undefined {
  const at = routeUrl.indexOf(`/:${name}`);
  if (at < 0) return undefined;
  const upTo = routeUrl.slice(0, at + name.length + 2);
  return Object.entries(ROUTE_PARAM_KINDS).find(([path]) => upTo.endsWith(path))?.[1];
}
