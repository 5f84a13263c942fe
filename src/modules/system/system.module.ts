import { Module } from '@nestjs/common';
import { FrontPageController } from './front-page.controller';
import { SystemController } from './system.controller';
import { SystemRepository } from './system.repository';

@Module({ controllers: [SystemController, FrontPageController], providers: [SystemRepository] })
export class SystemModule {}
