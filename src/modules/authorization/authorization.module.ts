import { Module } from '@nestjs/common';
import { AuthorizationRepository } from './authorization.repository';
import { AuthorizationService } from './authorization.service';

/**
 * The permission decision every service asks (AuthorizationService: grants, their scopes, the org
 * chart); no routes of its own.
 */
@Module({ providers: [AuthorizationService, AuthorizationRepository], exports: [AuthorizationService] })
export class AuthorizationModule {}
