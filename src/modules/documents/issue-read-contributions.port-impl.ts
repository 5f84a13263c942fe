import { Injectable, OnModuleInit } from '@nestjs/common';
import { IssueReadContributions } from '../issues/issue-read-contributions.port';
import { AnnotationsRepository } from './annotations.repository';
import { DocumentsRepository } from './documents.repository';
import { issueDocumentsView, planReviewThreads } from './issue-document-reads';

/** The documents module's part of the issue read model: the issue's documents and the plan's open review threads. */
@Injectable()
export class IssueDocumentReads implements OnModuleInit {
  constructor(
    private readonly docRows: DocumentsRepository,
    private readonly annotationRows: AnnotationsRepository,
    private readonly issueReads: IssueReadContributions,
  ) {}

  /** The issue page and the heartbeat context show the issue's documents and the plan's open review threads. */
  onModuleInit(): void {
    this.issueReads.documents = (companyId, issueId) => issueDocumentsView(this.docRows, companyId, issueId);
    this.issueReads.planReviewThreads = (companyId, issueId) => planReviewThreads(this.annotationRows, companyId, issueId);
  }
}
