import { AgentRuntimeController } from './agent-runtime.controller';
import { AgentIdentitiesModule } from '../../common/process/agent-identities.module';
import { Module, OnModuleInit } from '@nestjs/common';
import { SecretBindingsService } from '../secrets/secret-bindings.service';
import { ApprovalsModule } from '../approvals/approvals.module';
import { AgentAccessService } from './agent-access.service';
import { AgentConfigService } from './agent-config.service';
import { AgentKeysRepository } from './agent-keys.repository';
import { AgentKeysService } from './agent-keys.service';
import { AgentLifecycleService } from './agent-lifecycle.service';
import { AgentLookup } from './agent-lookup.service';
import { AgentBudgetScopes } from './budget-scope-owners.port-impl';
import { HiredAgentsRegistration } from './hired-agents.port-impl';
import { AgentKeyRegistration } from './auth-registry.port-impl';
import { HeartbeatAgentsRegistration } from './heartbeat-agents.port-impl';
import { DesiredSkills } from './desired-skills.port';
import { AgentScopesRepository } from './agent-scopes.repository';
import { AgentMemberships } from './agent-memberships.port';
import { AgentEngineRepository } from './agent-engine.repository';
import { AgentKeyResolver } from './agent-key.resolver';
import { AgentsController } from './agents.controller';
import { AgentEnvironmentService } from './agent-environment.service';
import { AgentsRepository } from './agents.repository';
import { AgentsService } from './agents.service';
import { JoinedAgentsRepository } from './joined-agents.repository';
import { MarkedAgentsRepository } from './marked-agents.repository';
import { AuthorizationModule } from '../authorization/authorization.module';
import { SecretsModule } from '../secrets/secrets.module';
import { BudgetsModule } from '../budgets/budgets.module';
import { HeartbeatModule } from '../heartbeat/heartbeat.module';
import { AdaptersModule } from '../adapters/adapters.module';
import { recordCompanies } from '../../common/references/record-company.repository';

/**
 * Agents and their API keys (`agents`, `agent_api_keys`): hiring, configuration, lifecycle, keys
 * and the agent's own runtime routes; fills the ports of heartbeat, approvals and budgets for agents.
 */
@Module({
  imports: [AdaptersModule, HeartbeatModule, BudgetsModule, SecretsModule, AuthorizationModule, ApprovalsModule, AgentIdentitiesModule],
  controllers: [AgentsController, AgentRuntimeController],
  providers: [
    recordCompanies('agents'),
    AgentsService,
    AgentEnvironmentService,
    AgentLookup,
    AgentConfigService,
    AgentAccessService,
    AgentLifecycleService,
    AgentKeysService,
    MarkedAgentsRepository,
    AgentsRepository,
    AgentKeysRepository,
    AgentScopesRepository,
    AgentBudgetScopes,
    HiredAgentsRegistration,
    AgentKeyRegistration,
    HeartbeatAgentsRegistration,
    DesiredSkills,
    AgentMemberships,
    AgentEngineRepository,
    AgentKeyResolver,
    JoinedAgentsRepository,
  ],
  exports: [
    AgentsService,
    AgentLookup,
    AgentConfigService,
    AgentLifecycleService,
    MarkedAgentsRepository,
    AgentScopesRepository,
    AgentMemberships,
    JoinedAgentsRepository,
    DesiredSkills,
  ],
})
export class AgentsModule implements OnModuleInit {
  constructor(
    private readonly config: AgentConfigService,
    private readonly secretBindings: SecretBindingsService,
  ) {}

  /** Secret references in adapterConfig.env must name secrets of the agent's company (validated and normalised on save). */
  onModuleInit(): void {
    this.config.envValidator = {
      validateEnv: (companyId, env, field) => this.secretBindings.validateEnvBindings(companyId, env, { field }),
    };
  }
}
