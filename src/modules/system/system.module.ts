import { Module } from '@nestjs/common';
import { FrontPageController } from './front-page.controller';
import { SystemController } from './system.controller';
import { SystemRepository } from './system.repository';

/**
 * Routes of the instance itself, outside any company: health, the CLI's `cli-auth/me`, and the front
 * page at `/`.
 */
@Module({ controllers: [SystemController, FrontPageController], providers: [SystemRepository] })
export class SystemModule {}
