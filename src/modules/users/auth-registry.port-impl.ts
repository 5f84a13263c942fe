import { Injectable, OnModuleInit } from '@nestjs/common';
import { AuthRegistry } from '../../common/auth/auth-registry.port';
import { UserCredentialResolver } from './user-credential.resolver';

/** Sessions and board API tokens are resolved here, for the guard. */
@Injectable()
export class UserCredentialRegistration implements OnModuleInit {
  constructor(
    private readonly registry: AuthRegistry,
    private readonly resolver: UserCredentialResolver,
  ) {}

  onModuleInit(): void {
    this.registry.addResolver(this.resolver);
  }
}
