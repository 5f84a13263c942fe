import { Injectable, OnModuleInit } from '@nestjs/common';
import { RunWakeDetails } from '../heartbeat/run-wake-details.port';
import { IssueWakeDetails } from './issue-wake-details';

/** A run's prompt quotes the issue and the comments that woke its agent. */
@Injectable()
export class RunWakeDetailsRegistration implements OnModuleInit {
  constructor(
    private readonly wakeDetails: RunWakeDetails,
    private readonly issueWakeDetails: IssueWakeDetails,
  ) {}

  onModuleInit(): void {
    this.wakeDetails.register((companyId, q) => this.issueWakeDetails.read(companyId, q));
  }
}
