import { Module } from '@nestjs/common';
import { EnvironmentsController } from './environments.controller';

/** Execution environments for the board UI: none besides the service's host. */
@Module({ controllers: [EnvironmentsController] })
export class EnvironmentsModule {}
