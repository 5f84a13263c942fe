import { Injectable } from '@nestjs/common';
import { isUuid } from '../../common/http/uuid';
import { IssueRelationsRepository } from './issue-relations.repository';
import { IssueRecord } from './issue.types';
import { issueError } from './issues.errors';
import { LabelsRepository } from './labels.repository';

/** isUuid without type narrowing (refs are strings either way). */
const looksLikeUuid = (s: string): boolean => isUuid(s);

/**
 * Placement rules that span several issues: blockers (relation type `blocks`: same company, no
 * self-block, no cycle) and parents (same company, no cycle). Cycle checks take a per-company
 * transaction-scoped advisory lock, so two concurrent edits cannot each close half of a cycle.
 */
@Injectable()
export class IssueRelations {
  constructor(
    private readonly graph: IssueRelationsRepository,
    private readonly labels: LabelsRepository,
  ) {}

  /** UUIDs or identifiers to ids of issues of the company; 422 naming the field otherwise. */
  async resolveIds(companyId: string, refs: string[], field: string): Promise<string[]> {
    const unique = [...new Set(refs)];
    if (!unique.length) return [];
    const uuids = unique.filter(looksLikeUuid);
    const idents = unique.filter((r) => !looksLikeUuid(r)).map((r) => r.toUpperCase());
    const rows = await this.graph.findRefs(companyId, uuids, idents);
    const known = new Set(rows.flatMap((r) => [r.id, r.identifier]));
    const missing = unique.filter((r) => !known.has(looksLikeUuid(r) ? r : r.toUpperCase()));
    if (missing.length)
      throw issueError('invalid_reference', `${field}: unknown issue(s) in this company: ${missing.join(', ')}`, { field });
    return [...new Set(rows.map((r) => r.id))];
  }

  /** Replaces the blockers of `issue` (PATCH semantics). */
  async replaceBlockers(issue: Pick<IssueRecord, 'id' | 'companyId'>, refs: string[]): Promise<void> {
    const blockerIds = await this.resolveIds(issue.companyId, refs, 'blockedByIssueIds');
    if (blockerIds.includes(issue.id)) throw issueError('blocker_self', 'An issue cannot block itself', { field: 'blockedByIssueIds' });
    await this.graph.lockGraph(issue.companyId);
    if (blockerIds.length) {
      // a cycle exists if a new blocker is already (transitively) blocked by this issue
      const cycle = await this.graph.blockerCycle(issue.companyId, issue.id, blockerIds);
      if (cycle)
        throw issueError('blocker_cycle', 'blockedByIssueIds would create a blocking cycle', {
          field: 'blockedByIssueIds',
          issueId: cycle,
        });
    }
    await this.graph.replaceBlockers(issue, blockerIds);
  }

  /** A parent of the same company that is neither the issue itself nor one of its descendants. */
  async resolveParent(companyId: string, issueId: string | null, ref: string): Promise<string> {
    const [parentId] = await this.resolveIds(companyId, [ref], 'parentId');
    if (!issueId) return parentId;
    if (parentId === issueId) throw issueError('parent_cycle', 'An issue cannot be its own parent', { field: 'parentId' });
    await this.graph.lockGraph(companyId);
    if (await this.graph.isAncestorOrSelf(companyId, issueId, parentId))
      throw issueError('parent_cycle', 'parentId would create a parent cycle', { field: 'parentId' });
    return parentId;
  }

  async replaceLabels(issue: Pick<IssueRecord, 'id' | 'companyId'>, labelIds: string[]): Promise<void> {
    const ids = [...new Set(labelIds)];
    if (ids.length && (await this.labels.countOfCompany(issue.companyId, ids)) !== ids.length)
      throw issueError('invalid_reference', 'labelIds: unknown label(s) in this company', { field: 'labelIds' });
    await this.labels.replaceOfIssue(issue, ids);
  }
}
