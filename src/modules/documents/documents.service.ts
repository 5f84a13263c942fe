import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { badRequest, conflict, DomainError, forbidden, notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { IssueStore } from '../issues/issue-store.service';
import type { IssueRow } from '../issues/issue.types';
import { returning } from '../issues/returning';
import { AnnotationsService } from './annotations.service';
import { DocumentResponseDto, GetDocumentQueryDto, PutDocumentDto, RevisionResponseDto } from './dto/document.dto';
import {
  authorOf,
  DOCUMENT_COLUMNS,
  DOCUMENT_KEY_RE,
  DocumentRow,
  iso,
  MAX_DOCUMENT_BODY_BYTES,
  REVISION_COLUMNS,
  RevisionRow,
  toDocumentResponse,
  toRevisionResponse,
} from './document.types';

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
export const documentLocked = (d: DocumentRow) =>
  new DomainError(409, 'document_locked', 'Document is locked', {
    key: d.key,
    lockedAt: iso(d.locked_at),
    lockedByAgentId: d.locked_by_agent_id,
    lockedByUserId: d.locked_by_user_id,
  });

const staleRevision = (
  message: string,
  current: Pick<DocumentRow, 'latest_revision_id' | 'latest_revision_number'> | null,
  code = 'stale_revision',
) =>
  conflict(message, code, {
    currentRevisionId: current?.latest_revision_id ?? null,
    currentRevisionNumber: current?.latest_revision_number ?? null,
  });

/**
 * Issue documents: revisioned markdown keyed per issue. Every write appends an immutable revision;
 * the document row's `latest_revision_id` is the optimistic-concurrency token (write rules 1-4).
 */
@Injectable()
export class DocumentsService {
  constructor(
    private readonly db: Db,
    private readonly issues: IssueStore,
    private readonly annotations: AnnotationsService,
    private readonly activity: ActivityRecorder,
  ) {}

  assertKey(key: string): void {
    if (!DOCUMENT_KEY_RE.test(key)) {
      throw badRequest(
        'Document keys use lowercase letters, digits, `_` and `-` (1 to 64 characters)',
        { field: 'key' },
        'invalid_document_key',
      );
    }
  }

  /** The latest body of every document of a company's issues (portability export). */
  async latestOfCompany(
    companyId: string,
  ): Promise<Array<{ issue_id: string; key: string; title: string | null; format: string; body: string }>> {
    return this.db.query(
      `SELECT d.issue_id, d.key, d.title, d.format, r.body FROM issue_documents d JOIN issue_document_revisions r ON r.id = d.latest_revision_id
        WHERE d.company_id = $1 ORDER BY d.issue_id, d.key`,
      [companyId],
    );
  }

  /** The issue and its document, 404 when either is missing. */
  async load(actor: Actor, ref: string, key: string, opts: { lock?: boolean } = {}): Promise<{ issue: IssueRow; doc: DocumentRow }> {
    this.assertKey(key);
    const issue = await this.issues.load(actor, ref);
    const doc = await this.find(issue.id, key, opts.lock);
    if (!doc) throw notFound('Document');
    return { issue, doc };
  }

  async find(issueId: string, key: string, lock = false): Promise<DocumentRow | null> {
    const [d] = await this.db.query<DocumentRow>(
      `SELECT ${DOCUMENT_COLUMNS} FROM issue_documents WHERE issue_id = $1 AND key = $2${lock ? ' FOR UPDATE' : ''}`,
      [issueId, key],
    );
    return d ?? null;
  }

  async revision(doc: DocumentRow, revisionId = doc.latest_revision_id): Promise<RevisionRow | null> {
    if (!isUuid(revisionId)) return null;
    const [r] = await this.db.query<RevisionRow>(
      `SELECT ${REVISION_COLUMNS} FROM issue_document_revisions WHERE id = $1 AND document_id = $2`,
      [revisionId, doc.id],
    );
    return r ?? null;
  }

  async toResponse(doc: DocumentRow): Promise<DocumentResponseDto> {
    return toDocumentResponse(doc, (await this.revision(doc))!);
  }

  /** All documents of an issue with their latest body, by key. */
  async list(actor: Actor, ref: string): Promise<DocumentResponseDto[]> {
    const issue = await this.issues.load(actor, ref);
    const rows = await this.db.query<DocumentRow & { body: string; change_summary: string | null }>(
      `SELECT ${DOCUMENT_COLUMNS.split(',')
        .map((c) => `d.${c.trim()}`)
        .join(', ')}, r.body, r.change_summary
         FROM issue_documents d JOIN issue_document_revisions r ON r.id = d.latest_revision_id
        WHERE d.issue_id = $1 ORDER BY d.key`,
      [issue.id],
    );
    return rows.map((d) => toDocumentResponse(d, d as unknown as RevisionRow));
  }

  /** GET one: agents get the annotation threads unless `includeAnnotations=false`; boards opt in. */
  async get(actor: Actor, ref: string, key: string, q: GetDocumentQueryDto): Promise<DocumentResponseDto> {
    const { doc } = await this.load(actor, ref, key);
    const out = await this.toResponse(doc);
    const withAnnotations = q.includeAnnotations ?? actor.kind === 'agent';
    if (withAnnotations)
      out.annotations = await this.annotations.threadsOf(doc, { status: 'all', includeComments: q.includeAnnotationComments ?? false });
    return out;
  }

  async revisions(actor: Actor, ref: string, key: string): Promise<RevisionResponseDto[]> {
    const { doc } = await this.load(actor, ref, key);
    const rows = await this.db.query<RevisionRow>(
      `SELECT ${REVISION_COLUMNS} FROM issue_document_revisions WHERE document_id = $1 ORDER BY revision_number DESC`,
      [doc.id],
    );
    return rows.map((r) => toRevisionResponse(r, doc));
  }

  /**
   * PUT: creates the document (no baseRevisionId) or appends a revision (baseRevisionId = latest).
   * Locked target: board callers get 409, agents are redirected to a derived key.
   */
  async put(actor: Actor, ref: string, key: string, dto: PutDocumentDto): Promise<PutResult> {
    this.assertKey(key);
    this.assertBody(dto.body);
    const issue = await this.issues.load(actor, ref);
    const doc = await this.find(issue.id, key, true);
    if (!doc) {
      if (dto.baseRevisionId) throw staleRevision('The document does not exist yet; omit baseRevisionId to create it', null);
      const created = await this.create(actor, issue, key, dto);
      if (!created) {
        // a concurrent writer created the key first: this write did not see its revision
        throw staleRevision(
          'The document was created concurrently; send its latest revision as baseRevisionId',
          await this.find(issue.id, key),
          'document_exists',
        );
      }
      await this.record(actor, issue, 'issue.document_created', created, { changeSummary: dto.changeSummary ?? null });
      return { document: await this.toResponse(created), created: true };
    }
    if (doc.locked_at) {
      if (actor.kind !== 'agent') throw documentLocked(doc);
      return this.redirect(actor, issue, doc, dto);
    }
    if (!dto.baseRevisionId) {
      throw staleRevision('The document exists: send its latest revision id as baseRevisionId', doc, 'base_revision_required');
    }
    if (dto.baseRevisionId !== doc.latest_revision_id) {
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
  async restore(actor: Actor, ref: string, key: string, revisionId: string): Promise<DocumentResponseDto> {
    const { issue, doc } = await this.load(actor, ref, key, { lock: true });
    const old = await this.revision(doc, revisionId);
    if (!old) throw notFound('Revision');
    if (doc.locked_at) throw documentLocked(doc);
    const updated = await this.append(actor, doc, {
      title: old.title,
      body: old.body,
      changeSummary: `Restored revision ${old.revision_number}`,
      baseRevisionId: doc.latest_revision_id,
      restoredFromRevisionId: old.id,
    });
    await this.record(actor, issue, 'issue.document_restored', updated, {
      restoredFromRevisionId: old.id,
      restoredFromRevisionNumber: old.revision_number,
    });
    return this.toResponse(updated);
  }

  /** Board only (the route says so); removes every revision and thread. Locked: 409. */
  async remove(actor: Actor, ref: string, key: string): Promise<DocumentResponseDto> {
    const { issue, doc } = await this.load(actor, ref, key, { lock: true });
    if (doc.locked_at) throw documentLocked(doc);
    const out = await this.toResponse(doc);
    await this.db.query(`DELETE FROM issue_documents WHERE id = $1`, [doc.id]);
    await this.record(actor, issue, 'issue.document_deleted', doc, {});
    return out;
  }

  /** Locking a locked document is a no-op. */
  async lock(actor: Actor, ref: string, key: string): Promise<DocumentResponseDto> {
    const { issue, doc } = await this.load(actor, ref, key, { lock: true });
    if (doc.locked_at) return this.toResponse(doc);
    const who = authorOf(actor);
    const [locked] = await returning<DocumentRow>(
      this.db,
      `UPDATE issue_documents SET locked_at = now(), locked_by_agent_id = $2, locked_by_user_id = $3 WHERE id = $1 RETURNING ${DOCUMENT_COLUMNS}`,
      [doc.id, who.agentId, who.userId],
    );
    await this.record(actor, issue, 'issue.document_locked', locked, {});
    return this.toResponse(locked);
  }

  /** Board callers unlock any lock; an agent only its own. Unlocking an unlocked document is a no-op. */
  async unlock(actor: Actor, ref: string, key: string): Promise<DocumentResponseDto> {
    const { issue, doc } = await this.load(actor, ref, key, { lock: true });
    if (!doc.locked_at) return this.toResponse(doc);
    if (actor.kind === 'agent' && doc.locked_by_agent_id !== actor.agentId) {
      throw forbidden('Only the board or the agent holding the lock may unlock this document', { reason: 'deny_unsupported_action' });
    }
    const [unlocked] = await returning<DocumentRow>(
      this.db,
      `UPDATE issue_documents SET locked_at = NULL, locked_by_agent_id = NULL, locked_by_user_id = NULL WHERE id = $1 RETURNING ${DOCUMENT_COLUMNS}`,
      [doc.id],
    );
    await this.record(actor, issue, 'issue.document_unlocked', unlocked, {
      previousLockedAt: iso(doc.locked_at),
      previousLockedByAgentId: doc.locked_by_agent_id,
      previousLockedByUserId: doc.locked_by_user_id,
    });
    return this.toResponse(unlocked);
  }

  private assertBody(body: string): void {
    if (Buffer.byteLength(body, 'utf8') > MAX_DOCUMENT_BODY_BYTES) {
      throw new DomainError(413, 'document_too_large', 'Document body exceeds 512 KiB', {
        field: 'body',
        maxBytes: MAX_DOCUMENT_BODY_BYTES,
      });
    }
  }

  /** Inserts document and revision 1; null when the key was taken concurrently. */
  private async create(actor: Actor, issue: IssueRow, key: string, dto: NewContent): Promise<DocumentRow | null> {
    const who = authorOf(actor);
    const revisionId = randomUUID();
    const [doc] = await this.db.query<DocumentRow>(
      `INSERT INTO issue_documents (company_id, issue_id, key, title, latest_revision_id, latest_revision_number,
         created_by_agent_id, created_by_user_id, updated_by_agent_id, updated_by_user_id)
       VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $6, $7)
       ON CONFLICT (issue_id, key) DO NOTHING RETURNING ${DOCUMENT_COLUMNS}`,
      [issue.company_id, issue.id, key, dto.title ?? null, revisionId, who.agentId, who.userId],
    );
    if (!doc) return null;
    await this.insertRevision(actor, doc, revisionId, 1, dto);
    return doc;
  }

  /**
   * The database decides between concurrent writers: the update only applies while the document's
   * latest revision is still the writer's base, and (document, revision_number) is unique.
   */
  private async append(actor: Actor, doc: DocumentRow, content: NewContent): Promise<DocumentRow> {
    const who = authorOf(actor);
    const revisionId = randomUUID();
    const number = doc.latest_revision_number + 1;
    const [updated] = await returning<DocumentRow>(
      this.db,
      `UPDATE issue_documents
          SET latest_revision_id = $3, latest_revision_number = $4, title = CASE WHEN $5 THEN $6 ELSE title END,
              updated_by_agent_id = $7, updated_by_user_id = $8, updated_at = now()
        WHERE id = $1 AND latest_revision_id = $2 RETURNING ${DOCUMENT_COLUMNS}`,
      [doc.id, content.baseRevisionId, revisionId, number, content.title !== undefined, content.title ?? null, who.agentId, who.userId],
    );
    if (!updated) throw staleRevision('baseRevisionId is not the latest revision of the document', await this.find(doc.issue_id, doc.key));
    const revision = await this.insertRevision(actor, updated, revisionId, number, content);
    await this.annotations.reanchorAll(updated, revision);
    return updated;
  }

  private async insertRevision(actor: Actor, doc: DocumentRow, id: string, number: number, c: NewContent): Promise<RevisionRow> {
    const who = authorOf(actor);
    const [r] = await this.db.query<RevisionRow>(
      `INSERT INTO issue_document_revisions (id, company_id, document_id, revision_number, title, format, body, change_summary,
         base_revision_id, restored_from_revision_id, created_by_agent_id, created_by_user_id, run_id)
       VALUES ($1, $2, $3, $4, $5, 'markdown', $6, $7, $8, $9, $10, $11, $12) RETURNING ${REVISION_COLUMNS}`,
      [
        id,
        doc.company_id,
        doc.id,
        number,
        doc.title,
        c.body,
        c.changeSummary ?? null,
        c.baseRevisionId ?? null,
        c.restoredFromRevisionId ?? null,
        who.agentId,
        who.userId,
        who.runId,
      ],
    );
    return r;
  }

  /** Agent write to a locked document: the content goes to the first free derived key (plan-2, plan-3, …). */
  private async redirect(actor: Actor, issue: IssueRow, source: DocumentRow, dto: PutDocumentDto): Promise<PutResult> {
    const stem = /^(.*)-\d+$/.exec(source.key)?.[1] ?? source.key;
    for (let attempt = 0; attempt < 20; attempt++) {
      const newKey = await this.freeDerivedKey(issue.id, stem);
      const created = await this.create(actor, issue, newKey, { ...dto, title: dto.title ?? source.title, baseRevisionId: null });
      if (!created) continue; // taken concurrently: try the next number
      const redirectedFromLockedDocument = {
        sourceKey: source.key,
        key: newKey,
        newKey,
        lockedAt: iso(source.locked_at)!,
        lockedByAgentId: source.locked_by_agent_id,
        lockedByUserId: source.locked_by_user_id,
      };
      await this.record(actor, issue, 'issue.document_created', created, {
        redirectedFromLockedDocument,
        changeSummary: dto.changeSummary ?? null,
      });
      return { document: { ...(await this.toResponse(created)), redirectedFromLockedDocument }, created: true };
    }
    throw conflict('Could not find a free derived key for the locked document', 'document_locked');
  }

  private async freeDerivedKey(issueId: string, stem: string): Promise<string> {
    const base = stem.slice(0, 56);
    const rows = await this.db.query<{ key: string }>(
      `SELECT key FROM issue_documents WHERE issue_id = $1 AND key ~ ('^' || $2 || '-[0-9]+$')`,
      [issueId, base], // key characters are literal in a regex
    );
    const taken = new Set(rows.map((r) => r.key));
    let n = 2;
    while (taken.has(`${base}-${n}`)) n++;
    return `${base}-${n}`;
  }

  private async record(actor: Actor, issue: IssueRow, action: string, doc: DocumentRow, details: Record<string, unknown>): Promise<void> {
    await this.activity.record({
      companyId: issue.company_id,
      action,
      entityType: 'issue',
      entityId: issue.id,
      actor,
      details: {
        documentId: doc.id,
        key: doc.key,
        revisionId: doc.latest_revision_id,
        revisionNumber: doc.latest_revision_number,
        ...details,
      },
    });
  }
}
