import { Injectable, OnModuleInit } from '@nestjs/common';
import { AuthRegistry } from '../../common/auth/auth-registry.port';
import { MembershipChecker } from './membership-checker';

/** Which companies a board user may reach (memberships, instance admins), for the guard. */
@Injectable()
export class MembershipCheckerRegistration implements OnModuleInit {
  constructor(
    private readonly registry: AuthRegistry,
    private readonly checker: MembershipChecker,
  ) {}

  onModuleInit(): void {
    this.registry.membershipChecker = this.checker;
  }
}
