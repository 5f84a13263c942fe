import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { forbidden, notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { iso } from '../../database/row-mapping';
import { IssueStore } from '../issues/issue-store.service';
import type { IssueRecord } from '../issues/issue.types';
import { AnnotationsService } from './annotations.service';
import { authorOf, DOCUMENT_KEY_RE, MAX_DOCUMENT_BODY_BYTES, toDocumentResponse, toRevisionResponse } from './document.types';
import { documentError } from './documents.errors';
import { DocumentRecord, DocumentsRepository, type LatestDocument, RevisionRecord } from './documents.repository';
import { DocumentResponseDto, GetDocumentQueryDto, PutDocumentDto, RevisionResponseDto } from './dto/document.dto';

interface NewContent {
  title?: string | null;
  body: string;
  changeSummary?: string | null;
  baseRevisionId?: string | null;
  restoredFromRevisionId?: string | null;
}

export interface PutResult {
  document: DocumentResponseDto;
  created: boolean;
}

/** 409 `{ error: "Document is locked", key, lockedAt }` (spec, document write rule 3). */
export const documentLocked = (d: DocumentRecord) =>
  documentError('document_locked', 'Document is locked', {
    key: d.key,
    lockedAt: iso(d.lockedAt),
    lockedByAgentId: d.lockedByAgentId,
    lockedByUserId: d.lockedByUserId,
  });

const staleRevision = (
  message: string,
  current: Pick<DocumentRecord, 'latestRevisionId' | 'latestRevisionNumber'> | null,
  code: 'stale_revision' | 'document_exists' | 'base_revision_required' = 'stale_revision',
) =>
  documentError(code, message, {
    currentRevisionId: current?.latestRevisionId ?? null,
    currentRevisionNumber: current?.latestRevisionNumber ?? null,
  });

/**
 * Issue documents: revisioned markdown keyed per issue. Every write appends an immutable revision;
 * the document row's `latest_revision_id` is the optimistic-concurrency token (write rules 1-4).
 */
@Injectable()
export class DocumentsService {
  constructor(
    private readonly documents: DocumentsRepository,
    private readonly issues: IssueStore,
    private readonly annotations: AnnotationsService,
    private readonly activity: ActivityRecorder,
  ) {}

  assertKey(key: string): void {
    if (!DOCUMENT_KEY_RE.test(key)) {
      throw documentError('invalid_document_key', 'Document keys use lowercase letters, digits, `_` and `-` (1 to 64 characters)', {
        field: 'key',
      });
    }
  }

  /** The latest body of every document of a company's issues (portability export). */
  async latestOfCompany(companyId: string): Promise<LatestDocument[]> {
    return this.documents.latestOfCompany(companyId);
  }

  /** The issue and its document, 404 when either is missing. */
  async load(
    routeCompanyId: string | undefined,
    ref: string,
    key: string,
    opts: { lock?: boolean } = {},
  ): Promise<{ issue: IssueRecord; doc: DocumentRecord }> {
    this.assertKey(key);
    const issue = await this.issues.load(routeCompanyId, ref);
    const doc = await this.find(issue.companyId, issue.id, key, opts.lock);
    if (!doc) throw notFound('Document');
    return { issue, doc };
  }

  async find(companyId: string, issueId: string, key: string, lock = false): Promise<DocumentRecord | null> {
    return this.documents.find(companyId, issueId, key, lock);
  }

  async revision(doc: DocumentRecord, revisionId = doc.latestRevisionId): Promise<RevisionRecord | null> {
    if (!isUuid(revisionId)) return null;
    return this.documents.revision(doc.companyId, doc.id, revisionId);
  }

  async toResponse(doc: DocumentRecord): Promise<DocumentResponseDto> {
    return toDocumentResponse(doc, (await this.revision(doc))!);
  }

  /** All documents of an issue with their latest body, by key. */
  async list(routeCompanyId: string | undefined, ref: string): Promise<DocumentResponseDto[]> {
    const issue = await this.issues.load(routeCompanyId, ref);
    const rows = await this.documents.listWithLatest(issue.companyId, issue.id);
    return rows.map((d) => toDocumentResponse(d, d));
  }

  /** GET one: agents get the annotation threads unless `includeAnnotations=false`; boards opt in. */
  async get(
    actor: Actor,
    routeCompanyId: string | undefined,
    ref: string,
    key: string,
    q: GetDocumentQueryDto,
  ): Promise<DocumentResponseDto> {
    const { doc } = await this.load(routeCompanyId, ref, key);
    const out = await this.toResponse(doc);
    const withAnnotations = q.includeAnnotations ?? actor.kind === 'agent';
    if (withAnnotations)
      out.annotations = await this.annotations.threadsOf(doc, { status: 'all', includeComments: q.includeAnnotationComments ?? false });
    return out;
  }

  async revisions(routeCompanyId: string | undefined, ref: string, key: string): Promise<RevisionResponseDto[]> {
    const { doc } = await this.load(routeCompanyId, ref, key);
    const rows = await this.documents.revisionsOf(doc.companyId, doc.id);
    return rows.map((r) => toRevisionResponse(r, doc));
  }

  /**
   * PUT: creates the document (no baseRevisionId) or appends a revision (baseRevisionId = latest).
   * Locked target: board callers get 409, agents are redirected to a derived key.
   */
  async put(actor: Actor, routeCompanyId: string | undefined, ref: string, key: string, dto: PutDocumentDto): Promise<PutResult> {
    this.assertKey(key);
    this.assertBody(dto.body);
    const issue = await this.issues.load(routeCompanyId, ref);
    const doc = await this.find(issue.companyId, issue.id, key, true);
    if (!doc) {
      if (dto.baseRevisionId) throw staleRevision('The document does not exist yet; omit baseRevisionId to create it', null);
      const created = await this.create(actor, issue, key, dto);
      if (!created) {
        // a concurrent writer created the key first: this write did not see its revision
        throw staleRevision(
          'The document was created concurrently; send its latest revision as baseRevisionId',
          await this.find(issue.companyId, issue.id, key),
          'document_exists',
        );
      }
      await this.record(actor, issue, 'issue.document_created', created, { changeSummary: dto.changeSummary ?? null });
      return { document: await this.toResponse(created), created: true };
    }
    if (doc.lockedAt) {
      if (actor.kind !== 'agent') throw documentLocked(doc);
      return this.redirect(actor, issue, doc, dto);
    }
    if (!dto.baseRevisionId) {
      throw staleRevision('The document exists: send its latest revision id as baseRevisionId', doc, 'base_revision_required');
    }
    if (dto.baseRevisionId !== doc.latestRevisionId) {
      throw staleRevision('baseRevisionId is not the latest revision of the document', doc);
    }
    const updated = await this.append(actor, doc, dto);
    await this.record(actor, issue, 'issue.document_updated', updated, {
      changeSummary: dto.changeSummary ?? null,
      baseRevisionId: dto.baseRevisionId,
    });
    return { document: await this.toResponse(updated), created: false };
  }

  /** A new latest revision with the content of an older one; the history is kept. */
  async restore(
    actor: Actor,
    routeCompanyId: string | undefined,
    ref: string,
    key: string,
    revisionId: string,
  ): Promise<DocumentResponseDto> {
    const { issue, doc } = await this.load(routeCompanyId, ref, key, { lock: true });
    const old = await this.revision(doc, revisionId);
    if (!old) throw notFound('Revision');
    if (doc.lockedAt) throw documentLocked(doc);
    const updated = await this.append(actor, doc, {
      title: old.title,
      body: old.body,
      changeSummary: `Restored revision ${old.revisionNumber}`,
      baseRevisionId: doc.latestRevisionId,
      restoredFromRevisionId: old.id,
    });
    await this.record(actor, issue, 'issue.document_restored', updated, {
      restoredFromRevisionId: old.id,
      restoredFromRevisionNumber: old.revisionNumber,
    });
    return this.toResponse(updated);
  }

  /** Board only (the route says so); removes every revision and thread. Locked: 409. */
  async remove(actor: Actor, routeCompanyId: string | undefined, ref: string, key: string): Promise<DocumentResponseDto> {
    const { issue, doc } = await this.load(routeCompanyId, ref, key, { lock: true });
    if (doc.lockedAt) throw documentLocked(doc);
    const out = await this.toResponse(doc);
    await this.documents.delete(doc.companyId, doc.id);
    await this.record(actor, issue, 'issue.document_deleted', doc, {});
    return out;
  }

  /** Locking a locked document is a no-op. */
  async lock(actor: Actor, routeCompanyId: string | undefined, ref: string, key: string): Promise<DocumentResponseDto> {
    const { issue, doc } = await this.load(routeCompanyId, ref, key, { lock: true });
    if (doc.lockedAt) return this.toResponse(doc);
    const locked = await this.documents.lock(doc.companyId, doc.id, authorOf(actor));
    await this.record(actor, issue, 'issue.document_locked', locked, {});
    return this.toResponse(locked);
  }

  /** Board callers unlock any lock; an agent only its own. Unlocking an unlocked document is a no-op. */
  async unlock(actor: Actor, routeCompanyId: string | undefined, ref: string, key: string): Promise<DocumentResponseDto> {
    const { issue, doc } = await this.load(routeCompanyId, ref, key, { lock: true });
    if (!doc.lockedAt) return this.toResponse(doc);
    if (actor.kind === 'agent' && doc.lockedByAgentId !== actor.agentId) {
      throw forbidden('Only the board or the agent holding the lock may unlock this document', { reason: 'deny_unsupported_action' });
    }
    const unlocked = await this.documents.unlock(doc.companyId, doc.id);
    await this.record(actor, issue, 'issue.document_unlocked', unlocked, {
      previousLockedAt: iso(doc.lockedAt),
      previousLockedByAgentId: doc.lockedByAgentId,
      previousLockedByUserId: doc.lockedByUserId,
    });
    return this.toResponse(unlocked);
  }

  private assertBody(body: string): void {
    if (Buffer.byteLength(body, 'utf8') > MAX_DOCUMENT_BODY_BYTES) {
      throw documentError('document_too_large', 'Document body exceeds 512 KiB', {
        field: 'body',
        maxBytes: MAX_DOCUMENT_BODY_BYTES,
      });
    }
  }

  /** Inserts document and revision 1; null when the key was taken concurrently. */
  private async create(actor: Actor, issue: IssueRecord, key: string, dto: NewContent): Promise<DocumentRecord | null> {
    const revisionId = randomUUID();
    const doc = await this.documents.insert(
      issue.companyId,
      { issueId: issue.id, key, title: dto.title ?? null, revisionId },
      authorOf(actor),
    );
    if (!doc) return null;
    await this.insertRevision(actor, doc, revisionId, 1, dto);
    return doc;
  }

  /**
   * The database decides between concurrent writers: the update only applies while the document's
   * latest revision is still the writer's base, and (document, revision_number) is unique.
   */
  private async append(actor: Actor, doc: DocumentRecord, content: NewContent): Promise<DocumentRecord> {
    const revisionId = randomUUID();
    const number = doc.latestRevisionNumber + 1;
    const updated = await this.documents.advance(
      doc.companyId,
      doc.id,
      content.baseRevisionId,
      { revisionId, number, title: content.title },
      authorOf(actor),
    );
    if (!updated)
      throw staleRevision(
        'baseRevisionId is not the latest revision of the document',
        await this.find(doc.companyId, doc.issueId, doc.key),
      );
    const revision = await this.insertRevision(actor, updated, revisionId, number, content);
    await this.annotations.reanchorAll(updated, revision);
    return updated;
  }

  private async insertRevision(actor: Actor, doc: DocumentRecord, id: string, number: number, c: NewContent): Promise<RevisionRecord> {
    return this.documents.insertRevision(
      doc,
      id,
      number,
      {
        body: c.body,
        changeSummary: c.changeSummary ?? null,
        baseRevisionId: c.baseRevisionId ?? null,
        restoredFromRevisionId: c.restoredFromRevisionId ?? null,
      },
      authorOf(actor),
    );
  }

  /** Agent write to a locked document: the content goes to the first free derived key (plan-2, plan-3, …). */
  private async redirect(actor: Actor, issue: IssueRecord, source: DocumentRecord, dto: PutDocumentDto): Promise<PutResult> {
    const stem = /^(.*)-\d+$/.exec(source.key)?.[1] ?? source.key;
    for (let attempt = 0; attempt < 20; attempt++) {
      const newKey = await this.freeDerivedKey(issue.companyId, issue.id, stem);
      const created = await this.create(actor, issue, newKey, { ...dto, title: dto.title ?? source.title, baseRevisionId: null });
      if (!created) continue; // taken concurrently: try the next number
      const redirectedFromLockedDocument = {
        sourceKey: source.key,
        key: newKey,
        newKey,
        lockedAt: iso(source.lockedAt)!,
        lockedByAgentId: source.lockedByAgentId,
        lockedByUserId: source.lockedByUserId,
      };
      await this.record(actor, issue, 'issue.document_created', created, {
        redirectedFromLockedDocument,
        changeSummary: dto.changeSummary ?? null,
      });
      return { document: { ...(await this.toResponse(created)), redirectedFromLockedDocument }, created: true };
    }
    throw documentError('document_locked', 'Could not find a free derived key for the locked document');
  }

  private async freeDerivedKey(companyId: string, issueId: string, stem: string): Promise<string> {
    const base = stem.slice(0, 56);
    const taken = new Set(await this.documents.derivedKeys(companyId, issueId, base));
    let n = 2;
    while (taken.has(`${base}-${n}`)) n++;
    return `${base}-${n}`;
  }

  private async record(
    actor: Actor,
    issue: IssueRecord,
    action: string,
    doc: DocumentRecord,
    details: Record<string, unknown>,
  ): Promise<void> {
    await this.activity.record({
      companyId: issue.companyId,
      action,
      entityType: 'issue',
      entityId: issue.id,
      actor,
      details: {
        documentId: doc.id,
        key: doc.key,
        revisionId: doc.latestRevisionId,
        revisionNumber: doc.latestRevisionNumber,
        ...details,
      },
    });
  }
}
