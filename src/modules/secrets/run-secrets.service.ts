import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { AgentActor } from '../../common/auth/actor';
import { AuthorizationService } from '../authorization/authorization.service';
import { GrantedSecretDto, GrantedSecretListDto, SecretValueDto } from './dto/secret.dto';
import { Delivery, isLowTrustAgent } from './secret-binding';
import { ResolvedBinding, SecretBindingsService } from './secret-bindings.service';
import { secretError } from './secrets.errors';
import { SecretRunRecord, SecretsRepository } from './secrets.repository';

/** A run whose context marks it as a skill test never reads secrets. */
export function isSkillTestRun(run: SecretRunRecord): boolean {
  const c = run.contextSnapshot ?? {};
  return run.invocationSource === 'skill_test' || c.skillTest === true || c.runKind === 'skill_test' || c.purpose === 'skill_test';
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
    const granted = grantsByAlias(await this.grantedBindings(actor));
    return { secrets: [...granted.values()].map(toGrantedEntry) };
  }

  /**
   * `secrets:read`: the run is live and not a skill test, the agent is not low-trust, the decision
   * service allows the read, and the alias is bound to this agent with delivery api or both (403
   * otherwise). Each success goes to the security audit table and the activity log, never the value.
   */
  async readValue(actor: AgentActor, key: string, requestId?: string): Promise<SecretValueDto> {
    const binding = grantsByAlias(await this.grantedBindings(actor)).get(key);
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
    const projectId = run.contextSnapshot?.projectId;
    const { bindings } = await this.bindings.bindingsFor(actor.companyId, actor.agentId, typeof projectId === 'string' ? projectId : null);
    return bindings;
  }
}

/** A secret's alias: its key (the name), never the env variable or config path it is bound to (SPEC: the config path is omitted). */
export const aliasOf = (secret: { name: string }) => secret.name;

const DELIVERY_UNION: Record<string, Record<string, Delivery>> = {
  env: { env: 'env', api: 'both', both: 'both' },
  api: { env: 'both', api: 'api', both: 'both' },
  both: { env: 'both', api: 'both', both: 'both' },
};

/**
 * The run's grants keyed by alias, one per secret. A secret bound several times (several
 * variables, or agent and project) is granted once: the agent's own binding decides the version,
 * and the deliveries add up (env here and api there: both).
 */
export function grantsByAlias(bindings: ResolvedBinding[]): Map<string, ResolvedBinding> {
  const out = new Map<string, ResolvedBinding>();
  const ordered = [...bindings.filter((b) => b.source === 'agent'), ...bindings.filter((b) => b.source !== 'agent')];
  for (const b of ordered) {
    if (!b.secret) continue;
    const alias = aliasOf(b.secret);
    const seen = out.get(alias);
    out.set(alias, seen ? { ...seen, delivery: DELIVERY_UNION[seen.delivery][b.delivery] } : { ...b, key: alias });
  }
  return out;
}

function toGrantedEntry(b: ResolvedBinding): GrantedSecretDto {
  const s = b.secret!;
  return {
    key: aliasOf(s),
    name: s.name,
    description: s.description,
    delivery: b.delivery,
    projectionClass: b.projectionClass,
    latestVersion: s.latestVersion,
    versionSelector: b.versionSelector,
    resolvedVersion: b.versionSelector === 'latest' ? s.latestVersion : b.versionSelector,
  };
}
