import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { AgentActor } from '../../common/auth/actor';
import { AuthorizationService } from '../authorization/authorization.service';
import { GrantedSecretDto, GrantedSecretListDto, SecretValueDto } from './dto/secret.dto';
import { isLowTrustAgent } from './secret-binding';
import { ResolvedBinding, SecretBindingsService } from './secret-bindings.service';
import { secretError } from './secrets.errors';
import { SecretRunRow, SecretsRepository } from './secrets.repository';

/** A run whose context marks it as a skill test never reads secrets. */
export function isSkillTestRun(run: SecretRunRow): boolean {
  const c = run.context_snapshot ?? {};
  return run.invocation_source === 'skill_test' || c.skillTest === true || c.runKind === 'skill_test' || c.purpose === 'skill_test';
}

/** The run-bound routes: what a live run may see of its agent's bindings, and the audited value read. */
@Injectable()
export class RunSecretsService {
  constructor(
    private readonly repo: SecretsRepository,
    private readonly bindings: SecretBindingsService,
    private readonly authz: AuthorizationService,
    private readonly activity: ActivityRecorder,
  ) {}

  async listGranted(actor: AgentActor): Promise<GrantedSecretListDto> {
    const granted = await this.grantedBindings(actor);
    return { secrets: granted.filter((b) => b.secret).map(toGrantedEntry) };
  }

  /**
   * `secrets:read`: the run is live and not a skill test, the agent is not low-trust, the decision
   * service allows the read, and the alias is bound to this agent with delivery api or both (403
   * otherwise). Each success goes to the security audit table and the activity log, never the value.
   */
  async readValue(actor: AgentActor, key: string, requestId?: string): Promise<SecretValueDto> {
    const granted = await this.grantedBindings(actor);
    const binding = granted.find((b) => b.key === key);
    if (!binding || binding.delivery === 'env') {
      throw secretError('secret_alias_not_granted', `Secret alias "${key}" is not granted to this run`, { key });
    }
    const r = await this.bindings.resolveBinding(actor.companyId, binding);
    await this.repo.insertAccessEvent({
      companyId: actor.companyId,
      secretId: r.secret.id,
      secretName: r.secret.name,
      bindingKey: key,
      version: r.version,
      action: 'value_read',
      agentId: actor.agentId,
      runId: actor.runId ?? null,
      credentialSource: actor.source,
      credentialId: actor.keyId ?? null,
      requestId: requestId ?? null,
    });
    await this.activity.record({
      companyId: actor.companyId,
      action: 'secret.value_read',
      entityType: 'secret',
      entityId: r.secret.id,
      actor,
      details: { key, secretName: r.secret.name, version: r.version, delivery: binding.delivery },
    });
    return { key, value: r.value, version: r.version };
  }

  /** Every gate of `secrets:read` except the alias, then the bindings of the run (project + agent). */
  private async grantedBindings(actor: AgentActor): Promise<ResolvedBinding[]> {
    const run = await this.repo.findAgentRun(actor.companyId, actor.agentId, actor.runId);
    if (!run || !['queued', 'running'].includes(run.status)) {
      throw secretError('run_not_live', 'Secrets are only readable from a live heartbeat run of this agent');
    }
    if (isSkillTestRun(run)) throw secretError('skill_test_run_denied', 'Skill-test runs cannot read secrets');
    const agent = await this.repo.findAgentTrust(actor.companyId, actor.agentId);
    if (!agent || isLowTrustAgent(agent)) throw secretError('low_trust_agent_denied', 'Low-trust review agents cannot read secrets');
    await this.authz.assert({ actor, action: 'secrets.read', companyId: actor.companyId, targetAgentId: actor.agentId });
    const projectId = run.context_snapshot?.projectId;
    const { bindings } = await this.bindings.bindingsFor(actor.companyId, actor.agentId, typeof projectId === 'string' ? projectId : null);
    return bindings;
  }
}

function toGrantedEntry(b: ResolvedBinding): GrantedSecretDto {
  const s = b.secret!;
  return {
    key: b.key,
    name: s.name,
    description: s.description,
    delivery: b.delivery,
    projectionClass: b.projectionClass,
    latestVersion: s.latestVersion,
    versionSelector: b.versionSelector,
    resolvedVersion: b.versionSelector === 'latest' ? s.latestVersion : b.versionSelector,
  };
}
