import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Folders of routines and of skills, as the board's sidebars show them: a tree per company and
 * kind, shared folders for everyone and a personal "My …" folder (and its subfolders) per user.
 * Deleting a folder deletes its subfolders; their items become unfiled (folder_id set null).
 */
export class Folders1763727000000 implements MigrationInterface {
  name = 'Folders1763727000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE folders (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('routine', 'skill')),
        name text NOT NULL,
        parent_id uuid REFERENCES folders(id) ON DELETE CASCADE,
        color text,
        position integer NOT NULL DEFAULT 0,
        owner_user_id text,
        system_key text CHECK (system_key IN ('my')),
        created_by_user_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX folders_company_kind ON folders (company_id, kind)`);
    await q.query(`CREATE INDEX folders_parent ON folders (parent_id) WHERE parent_id IS NOT NULL`);
    await q.query(
      `CREATE UNIQUE INDEX folders_sibling_name ON folders
         (company_id, kind, coalesce(parent_id, '00000000-0000-0000-0000-000000000000'::uuid), coalesce(owner_user_id, ''), lower(name))`,
    );
    await q.query(`CREATE UNIQUE INDEX folders_my ON folders (company_id, kind, owner_user_id) WHERE system_key = 'my'`);
    await q.query(`ALTER TABLE routines ADD COLUMN folder_id uuid REFERENCES folders(id) ON DELETE SET NULL`);
    await q.query(`ALTER TABLE company_skills ADD COLUMN folder_id uuid REFERENCES folders(id) ON DELETE SET NULL`);
    await q.query(`CREATE INDEX routines_folder ON routines (folder_id) WHERE folder_id IS NOT NULL`);
    await q.query(`CREATE INDEX company_skills_folder ON company_skills (folder_id) WHERE folder_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE company_skills DROP COLUMN folder_id`);
    await q.query(`ALTER TABLE routines DROP COLUMN folder_id`);
    await q.query(`DROP TABLE folders`);
  }
}
