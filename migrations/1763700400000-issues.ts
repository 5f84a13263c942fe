import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issues: hierarchical work items, their comments, blocker relations, company labels and the
 * per-user inbox state behind the `touchedByUserId` / `unreadForUserId` / `inboxArchivedByUserId`
 * list filters.
 *
 * Index notes (each index exists for one query path):
 * - issues_identifier_key: `{issueId}` accepts the identifier; prefixes are unique per instance,
 *   so identifiers are unique globally. issues_company_number_key guards the gap-free counter.
 * - issues_list_idx: the default list order (priority, newest first) per company, partial on
 *   visible issues, so `GET …/issues?limit=50` and keyset pages are an index range scan even at
 *   100k issues. priority_rank is a generated column so the order needs no CASE expression.
 * - issues_status_idx / issues_assignee_idx / issues_project_idx / issues_parent_idx /
 *   issues_origin_idx / issues_workspace_idx: the list filters and inbox-lite (assignee + status).
 * - issues_search_idx (GIN over a generated tsvector of title, identifier, description) and
 *   issue_comments_search_idx (GIN over each comment body): `q` full-text search. The vectors hold
 *   both English stems and unstemmed words, so queries match stemmed words and typed prefixes alike
 *   (`nothin` finds `nothing`, whose English stem is `noth`).
 * - issues_hidden_idx: the company activity feed leaves out activity of hidden issues.
 * - issues_checkout_run_idx: GET /heartbeat-runs/{runId}/issues and stale-lock checks.
 * - issue_comments_issue_idx: comment pages by issue in time order (cursor after a comment).
 * - issue_relations_*: blockers of an issue and the issues it blocks, both directions.
 * - activity_run_idx: issues touched by a run are found through activity rows of that run.
 */
export class Issues1763700400000 implements MigrationInterface {
  name = 'Issues1763700400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE issues (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        issue_number integer NOT NULL,
        identifier text NOT NULL,
        title text NOT NULL,
        description text,
        status text NOT NULL DEFAULT 'backlog'
          CHECK (status IN ('backlog','todo','in_progress','blocked','in_review','done','cancelled')),
        priority text NOT NULL DEFAULT 'medium' CHECK (priority IN ('critical','high','medium','low')),
        priority_rank smallint GENERATED ALWAYS AS (
          CASE priority WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2 ELSE 3 END) STORED,
        project_id uuid REFERENCES projects(id) ON DELETE SET NULL,
        goal_id uuid REFERENCES goals(id) ON DELETE SET NULL,
        parent_id uuid REFERENCES issues(id) ON DELETE SET NULL,
        assignee_agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
        assignee_user_id text,
        checkout_run_id uuid,
        execution_policy jsonb,
        execution_workspace_id uuid,
        execution_workspace_preference text,
        execution_workspace_settings jsonb,
        inherit_execution_workspace_from_issue_id uuid REFERENCES issues(id) ON DELETE SET NULL,
        hidden_at timestamptz,
        origin_kind text NOT NULL DEFAULT 'manual',
        origin_id text,
        created_by_agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
        created_by_user_id text,
        started_at timestamptz,
        completed_at timestamptz,
        cancelled_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        search_vector tsvector GENERATED ALWAYS AS (
          setweight(to_tsvector('simple', identifier), 'A') ||
          setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('simple', title), 'A') ||
          setweight(to_tsvector('english', coalesce(description, '')), 'B') ||
          setweight(to_tsvector('simple', coalesce(description, '')), 'B')) STORED
      )`);
    await q.query(`CREATE UNIQUE INDEX issues_identifier_key ON issues (identifier)`);
    await q.query(`CREATE UNIQUE INDEX issues_company_number_key ON issues (company_id, issue_number)`);
    await q.query(`CREATE INDEX issues_list_idx ON issues (company_id, priority_rank, created_at DESC, id DESC) WHERE hidden_at IS NULL`);
    await q.query(`CREATE INDEX issues_status_idx ON issues (company_id, status)`);
    await q.query(`CREATE INDEX issues_assignee_idx ON issues (assignee_agent_id, status) WHERE assignee_agent_id IS NOT NULL`);
    await q.query(`CREATE INDEX issues_assignee_user_idx ON issues (company_id, assignee_user_id) WHERE assignee_user_id IS NOT NULL`);
    await q.query(`CREATE INDEX issues_project_idx ON issues (project_id) WHERE project_id IS NOT NULL`);
    await q.query(`CREATE INDEX issues_parent_idx ON issues (parent_id) WHERE parent_id IS NOT NULL`);
    await q.query(`CREATE INDEX issues_origin_idx ON issues (company_id, origin_kind, origin_id)`);
    await q.query(`CREATE INDEX issues_workspace_idx ON issues (execution_workspace_id) WHERE execution_workspace_id IS NOT NULL`);
    await q.query(`CREATE INDEX issues_hidden_idx ON issues (company_id) WHERE hidden_at IS NOT NULL`);
    await q.query(`CREATE INDEX issues_checkout_run_idx ON issues (checkout_run_id) WHERE checkout_run_id IS NOT NULL`);
    await q.query(`CREATE INDEX issues_search_idx ON issues USING gin (search_vector)`);

    await q.query(`
      CREATE TABLE issue_comments (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        issue_id uuid NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
        body text NOT NULL,
        author_agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
        author_user_id text,
        run_id uuid,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        search_vector tsvector GENERATED ALWAYS AS (to_tsvector('english', body) || to_tsvector('simple', body)) STORED
      )`);
    await q.query(`CREATE INDEX issue_comments_issue_idx ON issue_comments (issue_id, created_at, id)`);
    await q.query(`CREATE INDEX issue_comments_search_idx ON issue_comments USING gin (search_vector)`);
    await q.query(`CREATE INDEX issue_comments_agent_idx ON issue_comments (author_agent_id) WHERE author_agent_id IS NOT NULL`);
    await q.query(`CREATE INDEX issue_comments_user_idx ON issue_comments (company_id, author_user_id) WHERE author_user_id IS NOT NULL`);

    // issue_id blocks related_issue_id (relation type `blocks`)
    await q.query(`
      CREATE TABLE issue_relations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        issue_id uuid NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
        related_issue_id uuid NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
        type text NOT NULL DEFAULT 'blocks' CHECK (type IN ('blocks')),
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK (issue_id <> related_issue_id)
      )`);
    await q.query(`CREATE UNIQUE INDEX issue_relations_pair_key ON issue_relations (issue_id, related_issue_id, type)`);
    await q.query(`CREATE INDEX issue_relations_related_idx ON issue_relations (related_issue_id, type)`);

    await q.query(`
      CREATE TABLE labels (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        name text NOT NULL,
        color text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX labels_company_name_key ON labels (company_id, lower(name))`);
    await q.query(`
      CREATE TABLE issue_labels (
        issue_id uuid NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
        label_id uuid NOT NULL REFERENCES labels(id) ON DELETE CASCADE,
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        PRIMARY KEY (issue_id, label_id)
      )`);
    await q.query(`CREATE INDEX issue_labels_label_idx ON issue_labels (label_id)`);

    // per-user inbox state: last read time and inbox archive
    await q.query(`
      CREATE TABLE issue_user_states (
        issue_id uuid NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
        user_id text NOT NULL,
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        last_read_at timestamptz,
        inbox_archived_at timestamptz,
        PRIMARY KEY (issue_id, user_id)
      )`);
    await q.query(`CREATE INDEX issue_user_states_user_idx ON issue_user_states (company_id, user_id)`);

    await q.query(`CREATE INDEX activity_run_idx ON activity_log (run_id) WHERE run_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS activity_run_idx`);
    await q.query(`DROP TABLE IF EXISTS issue_user_states, issue_labels, labels, issue_relations, issue_comments, issues CASCADE`);
  }
}
