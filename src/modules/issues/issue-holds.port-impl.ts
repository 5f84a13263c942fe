import { Injectable, OnModuleInit } from '@nestjs/common';
import { IssueHolds } from '../heartbeat/issue-holds.port';
import { IssueTreeHolds } from './issue-tree-holds.service';

/** Wakes for issues of a paused subtree wait until the hold is released. */
@Injectable()
export class IssueHoldsRegistration implements OnModuleInit {
  constructor(
    private readonly issueHolds: IssueHolds,
    private readonly holds: IssueTreeHolds,
  ) {}

  onModuleInit(): void {
    this.issueHolds.register(this.holds.probe);
  }
}
