import { Module } from '@nestjs/common';
import { AgentSecretsController } from './agent-secrets.controller';
import { RunSecretsService } from './run-secrets.service';
import { SecretBindingsService } from './secret-bindings.service';
import { SecretProviders } from './secret-providers';
import { SecretsController } from './secrets.controller';
import { SecretsKeyCheck } from './secrets-key-check.service';
import { SecretsRepository } from './secrets.repository';
import { SecretsService } from './secrets.service';
import { AuthorizationModule } from '../authorization/authorization.module';
import { SecretHealthRepository } from './secret-health.repository';
import { SecretHealthService } from './secret-health.service';
import { SecretProposalsRepository } from './secret-proposals.repository';
import { SecretProposalsService } from './secret-proposals.service';
import { SecretVaultController } from './secret-vault.controller';
import { UserSecretsController } from './user-secrets.controller';
import { UserSecretsRepository } from './user-secrets.repository';
import { UserSecretsService } from './user-secrets.service';
import { recordCompanies } from '../../common/references/record-company.repository';

/** Global so agents, projects and the heartbeat engine can validate and resolve bindings. */
@Module({
  imports: [AuthorizationModule],
  controllers: [SecretsController, AgentSecretsController, UserSecretsController, SecretVaultController],
  providers: [
    recordCompanies('secrets'),
    SecretProviders,
    SecretsRepository,
    SecretsService,
    SecretBindingsService,
    RunSecretsService,
    SecretsKeyCheck,
    UserSecretsRepository,
    UserSecretsService,
    SecretHealthRepository,
    SecretHealthService,
    SecretProposalsRepository,
    SecretProposalsService,
  ],
  exports: [SecretsService, SecretBindingsService],
})
export class SecretsModule {}
