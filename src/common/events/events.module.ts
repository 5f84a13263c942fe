import { Global, Module } from '@nestjs/common';
import { WorkCancellation } from './work-cancellation.port';

/** The work-cancellation port, for every module that stops a scope (global: companies, agents, budgets, approvals, issues). */
@Global()
@Module({ providers: [WorkCancellation], exports: [WorkCancellation] })
export class EventsModule {}
