import { Injectable } from '@nestjs/common';

/** The plan document as the heartbeat context names it. */
export interface PlanDocumentRef {
  key: string;
  latestRevisionId: string;
  latestRevisionNumber: number;
  lockedAt: string | null;
}

/** An issue's documents as the issue page shows them. */
export interface IssueDocumentsPart {
  planDocument: PlanDocumentRef | null;
  documentSummaries: object[];
}

/** A part of the read model of the issue `issueId` of the company `companyId`. */
type PartOf<T> = (companyId: string, issueId: string) => Promise<T>;

/**
 * What other modules add to the issue read model (the issue page and the heartbeat context):
 * documents and plan review threads (documents), work products (artifacts), attachments
 * (attachments). Those modules import the issues module and register their part at start-up, so
 * issues imports none of them (no module cycle) and each keeps its tables. Until a part is
 * registered it reads as empty.
 */
@Injectable()
export class IssueReadContributions {
  documents: PartOf<IssueDocumentsPart> = async () => ({ planDocument: null, documentSummaries: [] });
  planReviewThreads: PartOf<object[]> = async () => [];
  workProducts: PartOf<object[]> = async () => [];
  attachments: PartOf<object[]> = async () => [];
}
