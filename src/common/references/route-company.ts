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
};

const MAX_CACHED = 50_000;

/**
 * The company of a route without `:companyId`, from the records its path names (the guard asks
 * this once per request and answers 404 for an unknown record and another company's alike).
 *
 * Records never change company, so a company found is remembered per record (a deleted record
 * then still maps to its company: its handler answers the same 404). Absence is never remembered.
 */
@Injectable()
export class RouteCompanyResolver implements RouteRecords {
  private readonly known = new Map<string, string>();

  constructor(private readonly resolvers: RecordCompanyResolvers) {}

  /** The record parameters of a route (uuid values of mapped names), each with its kind. */
  recordsOf(params: Record<string, string>, routeUrl: string | undefined): Array<{ kind: ReferenceKind; id: string }> {
    const out: Array<{ kind: ReferenceKind; id: string }> = [];
    const segments = (routeUrl ?? '').split('/');
    for (const [name, value] of Object.entries(params)) {
      if (!isUuid(value)) continue;
      const kind = PARAM_KINDS[name] ?? (name === 'id' ? COLLECTION_KINDS[segments[segments.indexOf(':id') - 1] ?? ''] : undefined);
      if (kind) out.push({ kind, id: value.toLowerCase() });
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
      let owner: string | null | undefined = this.known.get(key);
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
