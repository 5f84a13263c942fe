import { Module } from '@nestjs/common';
import { SystemController } from './system.controller';
import { SystemRepository } from './system.repository';

@Module({ controllers: [SystemController], providers: [SystemRepository] })
export class SystemModule {}
