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
import { SecretCompanyRepository } from './secret-company.repository';

/** Global so agents, projects and the heartbeat engine can validate and resolve bindings. */
@Module({
  imports: [AuthorizationModule],
  controllers: [SecretsController, AgentSecretsController],
  providers: [
    SecretCompanyRepository,
    SecretProviders,
    SecretsRepository,
    SecretsService,
    SecretBindingsService,
    RunSecretsService,
    SecretsKeyCheck,
  ],
  exports: [SecretsService, SecretBindingsService],
})
export class SecretsModule {}
