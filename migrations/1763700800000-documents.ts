import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue documents (revisioned markdown with locks), annotation threads with their comments,
 * issue attachments (bytes in storage, described by an `assets` row) and issue work products.
 *
 * Concurrency and index notes:
 * - issue_documents_issue_key: one document per (issue, key); concurrent creators of one key race on it.
 * - issue_documents.latest_revision_id is the optimistic-concurrency token: a write is a conditional
 *   UPDATE on it, and issue_document_revisions_number_key makes a second revision with the same
 *   number impossible even if two writers passed the check.
 * - issue_document_revisions_doc_idx: revision list newest first.
 * - annotation threads: by document (list, newest activity first) and by issue (plan review context).
 * - issue_attachments_issue_idx / issue_work_products_issue_idx: per-issue lists;
 *   the *_company_idx indexes serve the company artifacts view ordered by update time.
 */
export class Documents1763700800000 implements MigrationInterface {
  name = 'Documents1763700800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE issue_documents (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        issue_id uuid NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
        key text NOT NULL CHECK (key ~ '^[a-z0-9_-]{1,64}$'),
        title text,
        format text NOT NULL DEFAULT 'markdown' CHECK (format = 'markdown'),
        latest_revision_id uuid NOT NULL,
        latest_revision_number integer NOT NULL,
        locked_at timestamptz,
        locked_by_agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
        locked_by_user_id text,
        created_by_agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
        created_by_user_id text,
        updated_by_agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
        updated_by_user_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX issue_documents_issue_key ON issue_documents (issue_id, key)`);
    await q.query(`CREATE INDEX issue_documents_company_idx ON issue_documents (company_id, updated_at DESC, id DESC)`);

    await q.query(`
      CREATE TABLE issue_document_revisions (
        id uuid PRIMARY KEY,
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        document_id uuid NOT NULL REFERENCES issue_documents(id) ON DELETE CASCADE,
        revision_number integer NOT NULL CHECK (revision_number > 0),
        title text,
        format text NOT NULL DEFAULT 'markdown',
        body text NOT NULL,
        change_summary text,
        base_revision_id uuid,
        restored_from_revision_id uuid,
        created_by_agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
        created_by_user_id text,
        run_id uuid,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE UNIQUE INDEX issue_document_revisions_number_key ON issue_document_revisions (document_id, revision_number)`);

    await q.query(`
      CREATE TABLE document_annotation_threads (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        issue_id uuid NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
        document_id uuid NOT NULL REFERENCES issue_documents(id) ON DELETE CASCADE,
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open','resolved')),
        anchor_state text NOT NULL DEFAULT 'active' CHECK (anchor_state IN ('active','shifted','orphaned')),
        base_revision_id uuid NOT NULL,
        base_revision_number integer NOT NULL,
        anchor_revision_id uuid NOT NULL,
        anchor_revision_number integer NOT NULL,
        original_selector jsonb NOT NULL,
        selector jsonb NOT NULL,
        created_by_agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
        created_by_user_id text,
        resolved_at timestamptz,
        resolved_by_agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
        resolved_by_user_id text,
        last_activity_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE INDEX document_annotation_threads_doc_idx ON document_annotation_threads (document_id, last_activity_at DESC, id DESC)`);
    await q.query(`CREATE INDEX document_annotation_threads_issue_idx ON document_annotation_threads (issue_id, status)`);

    await q.query(`
      CREATE TABLE document_annotation_comments (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        thread_id uuid NOT NULL REFERENCES document_annotation_threads(id) ON DELETE CASCADE,
        body text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 20000),
        author_agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
        author_user_id text,
        run_id uuid,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE INDEX document_annotation_comments_thread_idx ON document_annotation_comments (thread_id, created_at, id)`);

    await q.query(`
      CREATE TABLE issue_attachments (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        issue_id uuid NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
        issue_comment_id uuid REFERENCES issue_comments(id) ON DELETE SET NULL,
        asset_id uuid NOT NULL UNIQUE REFERENCES assets(id) ON DELETE CASCADE,
        created_by_agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
        created_by_user_id text,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE INDEX issue_attachments_issue_idx ON issue_attachments (issue_id, created_at, id)`);
    await q.query(`CREATE INDEX issue_attachments_company_idx ON issue_attachments (company_id, updated_at DESC, id DESC)`);

    await q.query(`
      CREATE TABLE issue_work_products (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        issue_id uuid NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
        type text NOT NULL CHECK (type IN ('artifact','pull_request','branch','commit','preview_url','document','other')),
        title text NOT NULL,
        url text,
        attachment_id uuid REFERENCES issue_attachments(id) ON DELETE SET NULL,
        status text,
        summary text,
        metadata jsonb,
        created_by_agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
        created_by_user_id text,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE INDEX issue_work_products_issue_idx ON issue_work_products (issue_id, created_at, id)`);
    await q.query(`CREATE INDEX issue_work_products_company_idx ON issue_work_products (company_id, updated_at DESC, id DESC) WHERE type = 'artifact'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS issue_work_products, issue_attachments, document_annotation_comments,
      document_annotation_threads, issue_document_revisions, issue_documents CASCADE`);
  }
}
