import { Injectable } from '@nestjs/common';
import { isoRequired } from '../../database/row-mapping';
import type { WakeDetails } from '../adapters/run.types';
import { AgentLookup } from '../agents/agent-lookup.service';
import { IssueCommentsRepository } from './issue-comments.repository';
import { IssuesRepository } from './issues.repository';

/**
 * What a run's wake names, for the agent's prompt (registered with the engine's RunWakeDetails):
 * the issue, and the comments that woke the agent with their text and author, in the run's company.
 */
@Injectable()
export class IssueWakeDetails {
  constructor(
    private readonly issues: IssuesRepository,
    private readonly comments: IssueCommentsRepository,
    private readonly agents: AgentLookup,
  ) {}

  async read(companyId: string, q: { issueId: string | null; commentIds: string[] }): Promise<WakeDetails> {
    const issue = q.issueId ? await this.issues.findBy(companyId, 'id', q.issueId) : null;
    const rows = issue && q.commentIds.length ? await this.comments.manyOfIssue(companyId, issue.id, q.commentIds) : [];
    const names = new Map<string, string | null>();
    for (const id of new Set(rows.map((r) => r.authorAgentId).filter((x): x is string => !!x)))
      names.set(id, (await this.agents.inCompany(companyId, id))?.name ?? null);
    return {
      issue: issue && {
        id: issue.id,
        identifier: issue.identifier,
        title: issue.title,
        status: issue.status,
        description: issue.description,
        originKind: issue.originKind,
        originId: issue.originId,
      },
      comments: rows.map((c) => ({
        id: c.id,
        issueId: c.issueId,
        body: c.body,
        author: c.authorAgentId
          ? { kind: 'agent' as const, id: c.authorAgentId, name: names.get(c.authorAgentId) ?? null }
          : { kind: 'user' as const, id: c.authorUserId ?? 'unknown', name: null },
        createdAt: isoRequired(c.createdAt),
      })),
    };
  }
}
