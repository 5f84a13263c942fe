import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { forbidden, notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { isoRequired } from '../../database/row-mapping';
import { AppConfig } from '../../config/app-config';
import {
  CreateMyUserSecretDto,
  CreateUserSecretDefinitionDto,
  MyUserSecretDto,
  MyUserSecretEntryDto,
  UpdateUserSecretDefinitionDto,
  UserSecretCoverageDto,
  UserSecretDefinitionDto,
} from './dto/user-secret.dto';
import { encryptValue, sha256OfValue } from './secret-crypto';
import { LOCAL_ENCRYPTED } from './secret-providers';
import { secretError } from './secrets.errors';
import { UserSecretDefinitionRecord, EncryptedMaterial, UserSecretsRepository, UserSecretValueRecord } from './user-secrets.repository';

export const toDefinition = (d: UserSecretDefinitionRecord): UserSecretDefinitionDto => ({
  id: d.id,
  companyId: d.companyId,
  key: d.key,
  name: d.name,
  description: d.description,
  usageGuidance: d.usageGuidance,
  status: d.status,
  provider: LOCAL_ENCRYPTED,
  managedMode: 'service_managed',
  createdByUserId: d.createdByUserId,
  createdByAgentId: d.createdByAgentId,
  createdAt: isoRequired(d.createdAt),
  updatedAt: isoRequired(d.updatedAt),
});

const toMine = (v: UserSecretValueRecord, d: UserSecretDefinitionRecord): MyUserSecretDto => ({
  id: v.id,
  companyId: v.companyId,
  scope: 'user',
  ownerUserId: v.userId,
  userSecretDefinitionId: d.id,
  key: d.key,
  name: d.name,
  provider: LOCAL_ENCRYPTED,
  status: 'active',
  latestVersion: v.version,
  lastRotatedAt: isoRequired(v.updatedAt),
  createdAt: isoRequired(v.createdAt),
  updatedAt: isoRequired(v.updatedAt),
});

/** The calling board user (user secrets are always one's own). */
function userOf(actor: Actor): string {
  if (actor.kind !== 'board') throw forbidden('Board access required');
  return actor.userId;
}

/**
 * Secrets each board user provides for themselves: the company declares definitions (a key, a
 * name, how to use it), each user stores their own value, encrypted with the instance master key
 * (associated data: the row id and version) and never returned; a rotation replaces it.
 */
@Injectable()
export class UserSecretsService {
  constructor(
    private readonly repo: UserSecretsRepository,
    private readonly config: AppConfig,
  ) {}

  async definitions(companyId: string): Promise<UserSecretDefinitionDto[]> {
    return (await this.repo.definitions(companyId)).map(toDefinition);
  }

  async createDefinition(actor: Actor, companyId: string, dto: CreateUserSecretDefinitionDto): Promise<UserSecretDefinitionDto> {
    const row = await this.repo.insertDefinition(companyId, {
      key: dto.key,
      name: dto.name,
      description: dto.description ?? null,
      usageGuidance: dto.usageGuidance ?? null,
      status: dto.status ?? 'active',
      userId: actor.kind === 'board' ? actor.userId : null,
      agentId: actor.kind === 'agent' ? actor.agentId : null,
    });
    if (!row)
      throw secretError('user_secret_key_taken', `A user secret with key "${dto.key}" already exists in this company`, { key: dto.key });
    return toDefinition(row);
  }

  async updateDefinition(companyId: string, id: string, dto: UpdateUserSecretDefinitionDto): Promise<UserSecretDefinitionDto> {
    await this.loadDefinition(companyId, id, true);
    return toDefinition(await this.repo.updateDefinition(companyId, id, dto));
  }

  /** Deletes the definition with every user's value of it. */
  async removeDefinition(companyId: string, id: string): Promise<UserSecretDefinitionDto> {
    const d = await this.loadDefinition(companyId, id, true);
    await this.repo.deleteDefinition(companyId, id);
    return toDefinition(d);
  }

  async coverage(companyId: string, id: string): Promise<UserSecretCoverageDto> {
    await this.loadDefinition(companyId, id);
    const c = await this.repo.coverage(companyId, id);
    return { definitionId: id, configuredCount: c.configured, inactiveCount: c.inactive, missingCount: c.missing };
  }

  /** The caller's values, each with its definition. */
  async mine(actor: Actor, companyId: string): Promise<MyUserSecretEntryDto[]> {
    const userId = userOf(actor);
    const defs = new Map((await this.repo.definitions(companyId)).map((d) => [d.id, d]));
    return (await this.repo.valuesOfUser(companyId, userId)).flatMap((v) => {
      const d = defs.get(v.definitionId);
      return d ? [{ definition: toDefinition(d), secret: toMine(v, d) }] : [];
    });
  }

  async createMine(actor: Actor, companyId: string, dto: CreateMyUserSecretDto): Promise<MyUserSecretDto> {
    const userId = userOf(actor);
    const d = await this.loadDefinition(companyId, dto.definitionId);
    if (dto.definitionKey !== undefined && dto.definitionKey !== d.key) {
      throw secretError('user_secret_definition_mismatch', 'definitionKey is not the key of that definition', { field: 'definitionKey' });
    }
    if (d.status !== 'active')
      throw secretError('user_secret_definition_archived', `The user secret "${d.key}" is archived`, { key: d.key });
    const id = randomUUID();
    const row = await this.repo.insertValue(companyId, { id, definitionId: d.id, userId, ...this.encrypt(id, 1, dto.value) });
    if (!row) throw secretError('user_secret_exists', `You have a value for "${d.key}" already; rotate it instead`, { key: d.key });
    return toMine(row, d);
  }

  async rotateMine(actor: Actor, companyId: string, id: string, value: string): Promise<MyUserSecretDto> {
    const v = await this.loadMine(actor, companyId, id, true);
    const d = await this.loadDefinition(companyId, v.definitionId);
    return toMine(await this.repo.rotateValue(companyId, v.id, v.version + 1, this.encrypt(v.id, v.version + 1, value)), d);
  }

  async removeMine(actor: Actor, companyId: string, id: string): Promise<MyUserSecretDto> {
    const v = await this.loadMine(actor, companyId, id, true);
    const d = await this.loadDefinition(companyId, v.definitionId);
    await this.repo.deleteValue(companyId, v.id);
    return toMine(v, d);
  }

  private encrypt(id: string, version: number, value: string): EncryptedMaterial {
    const enc = encryptValue(this.config.secretsMasterKey, value, `user-secret:${id}:v${version}`);
    return { ...enc, keyFingerprint: this.config.secretsMasterKeyFingerprint, valueSha256: sha256OfValue(value) };
  }

  private async loadDefinition(companyId: string, id: string, lock = false): Promise<UserSecretDefinitionRecord> {
    const d = isUuid(id) ? await this.repo.definition(companyId, id, lock) : null;
    if (!d) throw notFound('User secret definition');
    return d;
  }

  /** One of the caller's own values (another user's is unknown: 404). */
  private async loadMine(actor: Actor, companyId: string, id: string, lock = false): Promise<UserSecretValueRecord> {
    const v = isUuid(id) ? await this.repo.value(companyId, id, userOf(actor), lock) : null;
    if (!v) throw notFound('User secret');
    return v;
  }
}
