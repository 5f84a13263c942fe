import { Injectable, OnModuleInit } from '@nestjs/common';
import { HiddenIssues } from '../../common/events/hidden-issues.port';
import { IssueStore } from './issue-store.service';

/** Live events about hidden issues stay out of the stream, as out of the activity feed. */
@Injectable()
export class HiddenIssuesRegistration implements OnModuleInit {
  constructor(
    private readonly hidden: HiddenIssues,
    private readonly store: IssueStore,
  ) {}

  onModuleInit(): void {
    this.hidden.register((companyId, ids) => this.store.hiddenAmong(companyId, ids));
  }
}
