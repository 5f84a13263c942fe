import { Injectable, OnModuleInit } from '@nestjs/common';
import { IssueReadContributions } from '../issues/issue-read-contributions.port';
import { toWorkProductResponse } from './work-product.types';
import { WorkProductsRepository } from './work-products.repository';

/** The artifacts module's part of the issue read model: the issue's work products. */
@Injectable()
export class IssueWorkProductReads implements OnModuleInit {
  constructor(
    private readonly workProducts: WorkProductsRepository,
    private readonly issueReads: IssueReadContributions,
  ) {}

  /** The issue page lists the issue's work products. */
  onModuleInit(): void {
    this.issueReads.workProducts = async (companyId, issueId) =>
      (await this.workProducts.listByIssue(companyId, issueId)).map(toWorkProductResponse);
  }
}
