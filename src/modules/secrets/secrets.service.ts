import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { badRequest, notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { CreateSecretDto, RotateSecretDto, SecretResponseDto, UpdateSecretDto } from './dto/secret.dto';
import { SecretEntity } from './secret.entity';
import { SECRET_ERROR_CODES, SecretProviders } from './secret-providers';
import { secretError } from './secrets.errors';
import { SecretsRepository } from './secrets.repository';

export const toSecretResponse = (s: SecretEntity): SecretResponseDto => ({
  id: s.id,
  companyId: s.companyId,
  name: s.name,
  key: s.name,
  scope: 'company',
  status: 'active',
  provider: s.provider,
  externalRef: s.externalRef,
  latestVersion: s.latestVersion,
  description: s.description,
  createdByAgentId: s.createdByAgentId,
  createdByUserId: s.createdByUserId,
  createdAt: s.createdAt.toISOString(),
  updatedAt: s.updatedAt.toISOString(),
});

const UNIQUE_VIOLATION = '23505';
const isUniqueViolation = (err: unknown) =>
  (err as { driverError?: { code?: string }; code?: string })?.driverError?.code === UNIQUE_VIOLATION ||
  (err as { code?: string })?.code === UNIQUE_VIOLATION;

const duplicateName = (name: string) =>
  secretError('secret_name_taken', `A secret named "${name}" already exists in this company`, { name });

export interface ResolvedSecretValue {
  secret: SecretEntity;
  version: number;
  value: string;
}

/** Secret records and their immutable versions. Company-level operations never return a value. */
@Injectable()
export class SecretsService {
  constructor(
    private readonly db: Db,
    private readonly repo: SecretsRepository,
    private readonly providers: SecretProviders,
  ) {}

  listProviders() {
    return this.providers.descriptors();
  }

  async list(companyId: string): Promise<SecretResponseDto[]> {
    const rows = await this.repo.list(companyId);
    return rows.map(toSecretResponse);
  }

  /** Creates the secret and its version 1 in the request transaction; duplicate name: 409. */
  async create(actor: Actor | undefined, companyId: string, dto: CreateSecretDto): Promise<SecretResponseDto> {
    const providerId = dto.provider ?? this.providers.defaultFor(dto.externalRef);
    const provider = this.providers.usable(providerId);
    const externalRef = dto.externalRef ?? null;
    if (provider.descriptor.requiresExternalRef && !externalRef) {
      throw badRequest(
        `Provider ${providerId} requires externalRef`,
        { fields: [{ field: 'externalRef', messages: ['externalRef is required by this provider'] }] },
        'validation_failed',
      );
    }
    const id = randomUUID();
    const material = provider.store({ secretId: id, version: 1, value: dto.value, externalRef });
    const by = createdBy(actor);
    return this.db.transaction(async () => {
      const inserted = await this.repo.insertUnlessNameTaken({
        id,
        companyId,
        name: dto.name,
        provider: providerId,
        externalRef,
        description: dto.description ?? null,
        ...by,
      });
      if (!inserted) throw duplicateName(dto.name);
      await this.repo.insertVersion({ id: randomUUID(), secretId: id, companyId, version: 1, provider: providerId, ...material, ...by });
      return toSecretResponse(await this.repo.findByIdOrFail(companyId, id));
    });
  }

  async update(actor: Actor, companyId: string | undefined, secretId: string, dto: UpdateSecretDto): Promise<SecretResponseDto> {
    const secret = await this.loadForBoard(companyId, secretId, true);
    if (dto.externalRef === null && this.providers.usable(secret.provider).descriptor.requiresExternalRef) {
      throw badRequest(
        `Provider ${secret.provider} requires externalRef`,
        { fields: [{ field: 'externalRef', messages: ['externalRef cannot be cleared'] }] },
        'validation_failed',
      );
    }
    if (dto.name !== undefined && dto.name !== secret.name) {
      if (await this.repo.nameTaken(secret.companyId, dto.name)) throw duplicateName(dto.name);
      secret.name = dto.name;
    }
    if (dto.description !== undefined) secret.description = dto.description;
    if (dto.externalRef !== undefined) secret.externalRef = dto.externalRef;
    try {
      await this.repo.save(secret);
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName(secret.name);
      throw err;
    }
    return toSecretResponse(secret);
  }

  /** New immutable version; the row lock orders concurrent rotations so versions never collide. */
  async rotate(actor: Actor, companyId: string | undefined, secretId: string, dto: RotateSecretDto): Promise<SecretResponseDto> {
    const secret = await this.loadForBoard(companyId, secretId, true);
    const provider = this.providers.usable(secret.provider);
    const externalRef = dto.externalRef ?? secret.externalRef;
    const version = secret.latestVersion + 1;
    const material = provider.store({ secretId: secret.id, version, value: dto.value, externalRef });
    const by = createdBy(actor);
    await this.repo.insertVersion({
      id: randomUUID(),
      secretId: secret.id,
      companyId: secret.companyId,
      version,
      provider: secret.provider,
      ...material,
      ...by,
    });
    secret.latestVersion = version;
    secret.externalRef = externalRef;
    await this.repo.save(secret);
    return toSecretResponse(secret);
  }

  /** Hard delete; versions go with it (cascade). References left in configs fail at resolution. */
  async remove(actor: Actor, companyId: string | undefined, secretId: string): Promise<SecretResponseDto> {
    const secret = await this.loadForBoard(companyId, secretId, true);
    const response = toSecretResponse(secret);
    await this.repo.delete(secret.companyId, secret.id);
    return response;
  }

  /**
   * The secret of the route's company (`companyId`: resolved and checked by the guard, undefined
   * when it knows no such secret): 404 unknown or another company's; optionally locked FOR UPDATE.
   */
  private async loadForBoard(companyId: string | undefined, secretId: string, lock: boolean): Promise<SecretEntity> {
    const secret = companyId && isUuid(secretId) ? await this.repo.findInCompany(companyId, secretId, lock) : null;
    if (!secret) throw notFound('Secret');
    return secret;
  }

  /** Secrets of one company by id (for binding validation); ids of other companies are simply absent. */
  async findInCompany(companyId: string, ids: string[]): Promise<Map<string, SecretEntity>> {
    const valid = [...new Set(ids.filter(isUuid))];
    if (!companyId || valid.length === 0) return new Map();
    const rows = await this.repo.findManyInCompany(companyId, valid);
    return new Map(rows.map((r) => [r.id, r]));
  }

  /**
   * Decrypts (or fetches) one version of a company's secret: `latest` or a number. Failures carry
   * stable codes (SECRET_ERROR_CODES) so callers can fail a run clearly.
   */
  async resolveValue(
    companyId: string,
    secretId: string,
    selector: 'latest' | number,
    secret?: SecretEntity,
  ): Promise<ResolvedSecretValue> {
    const s = secret ?? (isUuid(secretId) ? await this.repo.findInCompany(companyId, secretId) : null);
    if (!s || s.companyId !== companyId) {
      throw secretError(SECRET_ERROR_CODES.notFound, `Secret ${secretId} does not exist in this company (deleted?)`, { secretId });
    }
    const version = selector === 'latest' ? s.latestVersion : selector;
    const stored = await this.repo.findVersion(s.companyId, s.id, version);
    if (!stored) {
      throw secretError(SECRET_ERROR_CODES.versionNotFound, `Secret "${s.name}" has no version ${version}`, {
        secretId: s.id,
        version,
      });
    }
    const value = this.providers.usable(stored.provider).resolve(stored);
    return { secret: s, version, value };
  }

  /** Stores a raw value as a new local secret (schema-driven `secret-ref` fields); the name gets a unique suffix. */
  async createFromRawValue(actor: Actor | undefined, companyId: string, baseName: string, value: string): Promise<SecretEntity> {
    const name = `${baseName}-${randomUUID().slice(0, 8)}`;
    const created = await this.create(actor, companyId, { name, value, description: `Created from configuration field ${baseName}` });
    return this.repo.findByIdOrFail(companyId, created.id);
  }
}

function createdBy(actor: Actor | undefined): { createdByAgentId: string | null; createdByUserId: string | null } {
  if (!actor) return { createdByAgentId: null, createdByUserId: null };
  return actor.kind === 'agent'
    ? { createdByAgentId: actor.agentId, createdByUserId: null }
    : { createdByAgentId: null, createdByUserId: actor.userId };
}
