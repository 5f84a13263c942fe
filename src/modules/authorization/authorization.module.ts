import { Module } from '@nestjs/common';
import { AuthorizationRepository } from './authorization.repository';
import { AuthorizationService } from './authorization.service';

@Module({ providers: [AuthorizationService, AuthorizationRepository], exports: [AuthorizationService] })
export class AuthorizationModule {}
