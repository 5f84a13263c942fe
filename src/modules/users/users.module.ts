import { Module } from '@nestjs/common';
import { InstanceModule } from '../instance/instance.module';
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
import { UserCredentialRegistration } from './auth-registry.port-impl';
import { InstanceUsersRegistration } from './instance-users.port-impl';

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
    UserCredentialRegistration,
    InstanceUsersRegistration,
  ],
  exports: [BoardClaimService],
})
export class UsersModule {}
