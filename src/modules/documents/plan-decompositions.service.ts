import { InstanceSettingsService } from '../instance/instance-settings.service';
import { isoRequired } from '../../database/row-mapping';
import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { forbidden } from '../../common/errors/domain-error';
import { documentError } from './documents.errors';
import { IssueStore } from '../issues/issue-store.service';
import { IssuesService } from '../issues/issues.service';
import { DocumentsService } from './documents.service';
import { AcceptPlanDto, PlanDecompositionDto } from './dto/plan-decomposition.dto';
import { PlanDecompositionRecord, PlanDecompositionsRepository } from './plan-decompositions.repository';
import { planItems } from './plan-items';

export const PLAN_KEY = 'plan';
/** A plan with more top-level items than this is not decomposed (422): it is a list, not a plan of tasks. */
export const MAX_PLAN_ITEMS = 100;

/**
 * Accepted plan decompositions: the board accepts the issue's `plan` document at its latest
 * revision; each top-level list item of that revision becomes a child issue (project and goal of
 * the parent), all in one transaction with the record naming the revision and the children. A
 * revision is accepted once; a changed plan can be accepted again at its new revision.
 */
@Injectable()
export class PlanDecompositions {
  constructor(
    private readonly repo: PlanDecompositionsRepository,
    private readonly documents: DocumentsService,
    private readonly issues: IssuesService,
    private readonly store: IssueStore,
    private readonly settings: InstanceSettingsService,
  ) {}

  async accept(actor: Actor, routeCompanyId: string | undefined, ref: string, dto: AcceptPlanDto): Promise<PlanDecompositionDto> {
    if (actor.kind !== 'board') throw forbidden('Only board users accept plans');
    if (!(await this.settings.experimental()).enableIssuePlanDecompositions) {
      throw documentError(
        'plan_decompositions_disabled',
        'Plan decompositions are switched off (experimental setting enableIssuePlanDecompositions)',
      );
    }
    const { issue, doc } = await this.documents.load(routeCompanyId, ref, PLAN_KEY, { lock: true });
    if (dto.baseRevisionId && dto.baseRevisionId !== doc.latestRevisionId) {
      throw documentError('stale_plan_revision', 'The plan changed since that revision', {
        currentRevisionId: doc.latestRevisionId,
        currentRevisionNumber: doc.latestRevisionNumber,
      });
    }
    const accepted = await this.repo.ofRevision(issue.companyId, issue.id, doc.latestRevisionId);
    if (accepted)
      throw documentError('plan_revision_already_accepted', 'This plan revision was already accepted', { decompositionId: accepted.id });
    const revision = (await this.documents.revision(doc))!;
    const items = planItems(revision.body);
    if (items.length === 0) throw documentError('plan_has_no_items', 'The plan has no list items to turn into child issues');
    if (items.length > MAX_PLAN_ITEMS)
      throw documentError('plan_too_many_items', `The plan has more than ${MAX_PLAN_ITEMS} list items`, { items: items.length });
    const children = [];
    for (const item of items) {
      children.push(
        await this.issues.create(actor, issue.companyId, {
          title: item.title,
          description: item.description,
          status: dto.childStatus ?? 'todo',
          parentId: issue.id,
          projectId: issue.projectId,
          goalId: issue.goalId,
        }),
      );
    }
    const row = await this.repo.insert(issue.companyId, {
      issueId: issue.id,
      documentKey: PLAN_KEY,
      revisionId: doc.latestRevisionId,
      revisionNumber: doc.latestRevisionNumber,
      userId: actor.userId,
      childIssueIds: children.map((c) => c.id),
    });
    if (!row) throw documentError('plan_revision_already_accepted', 'This plan revision was accepted concurrently');
    return this.toDto(row);
  }

  /** Newest first. */
  async list(routeCompanyId: string | undefined, ref: string): Promise<PlanDecompositionDto[]> {
    const issue = await this.store.load(routeCompanyId, ref);
    const rows = await this.repo.listOfIssue(issue.companyId, issue.id);
    return Promise.all(rows.map((r) => this.toDto(r)));
  }

  private async toDto(r: PlanDecompositionRecord): Promise<PlanDecompositionDto> {
    return {
      id: r.id,
      companyId: r.companyId,
      issueId: r.issueId,
      documentKey: r.documentKey,
      revisionId: r.revisionId,
      revisionNumber: r.revisionNumber,
      acceptedByUserId: r.acceptedByUserId,
      acceptedAt: isoRequired(r.createdAt),
      childIssues: await this.store.summariesOf(r.companyId, r.childIssueIds),
    };
  }
}
