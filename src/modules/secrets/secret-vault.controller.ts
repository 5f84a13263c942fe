import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import { LogActivity, NoActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { notFound } from '../../common/errors/domain-error';
import { ProviderConfigHealthCheckDto, SecretProviderConfigDto, SecretProvidersHealthDto } from './dto/secret-provider.dto';
import {
  ApproveSecretProposalDto,
  CreateSecretProposalDto,
  RejectSecretProposalDto,
  SecretProposalDto,
  SecretProposalListQueryDto,
} from './dto/secret-proposal.dto';
import { SecretHealthService } from './secret-health.service';
import { SecretProposalsService } from './secret-proposals.service';
import { SecretProviders } from './secret-providers';
import { secretError, SECRET_ERRORS } from './secrets.errors';

/** Activity names the proposal, never a value. */
const proposalDetails = (c: { result: Record<string, unknown> }) => ({
  name: c.result.proposedName,
  status: c.result.status,
  secretId: c.result.secretId ?? null,
});
const readOnly = () =>
  secretError(
    'secret_provider_config_read_only',
    'Secret providers are built in and configured by the operator (the service environment); they cannot be created, changed or removed here',
  );

@ApiTags('secrets')
@ApiDomainErrors(SECRET_ERRORS)
@Controller()
export class SecretVaultController {
  constructor(
    private readonly health: SecretHealthService,
    private readonly providers: SecretProviders,
    private readonly proposals: SecretProposalsService,
  ) {}

  /** Each provider's health for this company: can it store and read values now (the local provider: a probe with the master key). */
  @Get('companies/:companyId/secret-providers/health')
  @Authorize({ callers: ['board'] })
  async providerHealth(@Param('companyId') companyId: string): Promise<SecretProvidersHealthDto> {
    return { providers: await this.health.health(companyId) };
  }

  /** The providers as read-only vault configurations of the company, each with its health and whether it is the default. */
  @Get('companies/:companyId/secret-provider-configs')
  @Authorize({ callers: ['board'] })
  providerConfigs(@Param('companyId') companyId: string): Promise<SecretProviderConfigDto[]> {
    return this.health.configs(companyId);
  }

  /** Refused (422 secret_provider_config_read_only): providers are configured by the operator. */
  @Post('companies/:companyId/secret-provider-configs')
  @NoActivity('always refused')
  @ApiBody({ schema: { type: 'object' } })
  @Authorize({ callers: ['board'] })
  createProviderConfig(): never {
    throw readOnly();
  }

  /** Runs the provider's health check now. */
  @Post('secret-provider-configs/:configId/health')
  @HttpCode(200)
  @NoActivity('a read: the check changes nothing')
  @Authorize({ callers: ['board'] })
  @ApiBody({ required: false, schema: { type: 'object' } })
  async checkProviderConfig(@Param('configId') configId: string): Promise<ProviderConfigHealthCheckDto> {
    if (!this.providers.descriptors().some((d) => d.id === configId)) throw notFound('Secret provider configuration');
    // the route names no company: the provider itself is checked, not a company's stored values
    return this.health.checkConfig(null, configId);
  }

  /** Refused (422): providers are configured by the operator. */
  @Patch('secret-provider-configs/:configId')
  @NoActivity('always refused')
  @ApiBody({ schema: { type: 'object' } })
  @Authorize({ callers: ['board'] })
  updateProviderConfig(): never {
    throw readOnly();
  }

  /** Refused (422): providers are configured by the operator. */
  @Delete('secret-provider-configs/:configId')
  @NoActivity('always refused')
  @Authorize({ callers: ['board'] })
  removeProviderConfig(): never {
    throw readOnly();
  }

  /** Refused (422): the default provider is the deployment's (SERVICE_SECRETS_DEFAULT_PROVIDER). */
  @Post('secret-provider-configs/:configId/default')
  @NoActivity('always refused')
  @ApiBody({ required: false, schema: { type: 'object' } })
  @Authorize({ callers: ['board'] })
  setDefaultProviderConfig(): never {
    throw readOnly();
  }

  /**
   * Proposes a company secret by name (an agent of the company, or the board), with why it is
   * needed and, optionally, a value the proposer already has (held encrypted, never shown). One
   * pending proposal per name (409).
   */
  @Post('companies/:companyId/secret-proposals')
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('secret_proposal.created', {
    entityType: 'secret_proposal',
    details: (c) => ({ ...proposalDetails(c), hasValue: c.result.hasValue }),
  })
  propose(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() dto: CreateSecretProposalDto,
  ): Promise<SecretProposalDto> {
    return this.proposals.propose(actor, companyId, dto);
  }

  /** Proposals, newest first (`status`, default pending; `all`). An agent sees its own. */
  @Get('companies/:companyId/secret-proposals')
  @Authorize({ callers: ['board', 'agent'] })
  listProposals(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Query() q: SecretProposalListQueryDto,
  ): Promise<SecretProposalDto[]> {
    return this.proposals.list(actor, companyId, q.status ?? 'pending');
  }

  /**
   * Fills in and approves: creates the company secret (name and description may be overridden)
   * from `value`, or from the value the proposer supplied (422 when neither); 409 when decided
   * already or the name is taken. Answers the proposal with the new secret's metadata.
   */
  @Post('companies/:companyId/secret-proposals/:proposalId/approve')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity('secret_proposal.approved', { entityType: 'secret_proposal', details: proposalDetails })
  approve(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('proposalId') proposalId: string,
    @Body() dto: ApproveSecretProposalDto,
  ): Promise<SecretProposalDto> {
    return this.proposals.approve(actor, companyId, proposalId, dto);
  }

  /** Rejects a pending proposal (its held value is wiped). */
  @Post('companies/:companyId/secret-proposals/:proposalId/reject')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity('secret_proposal.rejected', { entityType: 'secret_proposal', details: proposalDetails })
  reject(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('proposalId') proposalId: string,
    @Body() dto: RejectSecretProposalDto,
  ): Promise<SecretProposalDto> {
    return this.proposals.reject(actor, companyId, proposalId, dto);
  }
}
