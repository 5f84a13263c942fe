import { Module, OnModuleInit } from '@nestjs/common';
import { AuthRegistry } from '../../common/auth/auth-registry';
import { InstanceModule } from '../instance/instance.module';
import { InstanceUsers } from '../instance/instance-users.port';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { BoardClaimController } from './board-claim.controller';
import { BoardClaimService } from './board-claim.service';
import { BoardTokensService } from './board-tokens.service';
import { LoginRateLimiter, LoginRateLimitGuard } from './login-rate-limiter';
import { SessionsRepository } from './sessions.repository';
import { SessionsService } from './sessions.service';
import { UserCredentialResolver } from './user-credential.resolver';
import { UsersRepository } from './users.repository';

/** Users, sessions, board tokens, board claim; registers the session and board-token resolver with the guard. */
@Module({
  imports: [InstanceModule],
  controllers: [AuthController, BoardClaimController],
  providers: [
    UsersRepository,
    SessionsRepository,
    AuthService,
    SessionsService,
    BoardTokensService,
    LoginRateLimiter,
    LoginRateLimitGuard,
    BoardClaimService,
    UserCredentialResolver,
  ],
  exports: [BoardClaimService],
})
export class UsersModule implements OnModuleInit {
  constructor(
    private readonly registry: AuthRegistry,
    private readonly resolver: UserCredentialResolver,
    private readonly instanceUsers: InstanceUsers,
    private readonly users: UsersRepository,
  ) {}

  onModuleInit(): void {
    this.registry.addResolver(this.resolver);
    // user administration (instance) reads and writes the users table through its owner
    this.instanceUsers.register(this.users);
  }
}
