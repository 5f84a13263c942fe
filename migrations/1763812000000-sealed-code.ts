import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sealed plugin and adapter code: the sha256 of an installed package's file tree, recorded at
 * install and checked before a plugin worker starts or an external adapter is loaded. Rows installed
 * before this migration have none: the first start records it. A plugin whose code changed since
 * install is put in status `error` with the reason (`error_code` `code_tampered`, `error_message`).
 */
export class SealedCode1763812000000 implements MigrationInterface {
  name = 'SealedCode1763812000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE plugins ADD COLUMN code_hash text`);
    await q.query(`ALTER TABLE plugins ADD COLUMN error_code text`);
    await q.query(`ALTER TABLE plugins ADD COLUMN error_message text`);
    await q.query(`ALTER TABLE plugins DROP CONSTRAINT plugins_status_check`);
    await q.query(`ALTER TABLE plugins ADD CONSTRAINT plugins_status_check CHECK (status IN ('enabled','disabled','error'))`);
    await q.query(`ALTER TABLE external_adapters ADD COLUMN code_hash text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE external_adapters DROP COLUMN code_hash`);
    await q.query(`UPDATE plugins SET status = 'disabled' WHERE status = 'error'`);
    await q.query(`ALTER TABLE plugins DROP CONSTRAINT plugins_status_check`);
    await q.query(`ALTER TABLE plugins ADD CONSTRAINT plugins_status_check CHECK (status IN ('enabled','disabled'))`);
    await q.query(`ALTER TABLE plugins DROP COLUMN error_message`);
    await q.query(`ALTER TABLE plugins DROP COLUMN error_code`);
    await q.query(`ALTER TABLE plugins DROP COLUMN code_hash`);
  }
}
