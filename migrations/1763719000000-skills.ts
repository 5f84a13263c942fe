import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Company skills (issue 19). A skill is a folder of text files; the files live in the database
 * (`company_skill_files`), so every instance sees the same skill and a skill changes in one
 * transaction with its inventory and audit. `content` is NULL for a file the service keeps only as
 * an inventory entry (binary or over the size limit: the audit fails such a skill).
 */
export class Skills1763719000000 implements MigrationInterface {
  name = 'Skills1763719000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE company_skills (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        key text NOT NULL,
        slug text NOT NULL,
        name text NOT NULL,
        description text,
        source_type text NOT NULL,
        source_locator text,
        source_ref text,
        trust_level text NOT NULL CHECK (trust_level IN ('markdown_only','assets','scripts_executables')),
        compatibility text NOT NULL DEFAULT 'compatible',
        file_inventory jsonb NOT NULL DEFAULT '[]',
        metadata jsonb NOT NULL DEFAULT '{}',
        content_hash text NOT NULL,
        audit jsonb,
        bundled boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT company_skills_key_unique UNIQUE (company_id, key)
      )`);
    await q.query(`CREATE INDEX company_skills_slug_idx ON company_skills (company_id, slug)`);
    await q.query(`
      CREATE TABLE company_skill_files (
        skill_id uuid NOT NULL REFERENCES company_skills(id) ON DELETE CASCADE,
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        path text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('skill','reference','script','asset')),
        size_bytes integer NOT NULL,
        sha256 text NOT NULL,
        content text,
        PRIMARY KEY (skill_id, path)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS company_skill_files`);
    await q.query(`DROP TABLE IF EXISTS company_skills`);
  }
}
