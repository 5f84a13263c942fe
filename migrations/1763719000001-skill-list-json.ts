import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The skills list as a read model: each row keeps its list entry as JSON text (`list_json`),
 * written by a trigger on every insert and update, so the list of a company with hundreds of
 * skills is a concatenation (building 500 JSON objects per request took Postgres 20 ms; parsing
 * and serialising 500 rows in Node about as long). The fields are those of the API's skill
 * record without `attachedAgentCount` (added per request), `metadata` and `contentHash`
 * (detail only), with inventory entries reduced to `path` and `kind`.
 */
export class SkillListJson1763719000001 implements MigrationInterface {
  name = 'SkillListJson1763719000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE company_skills ADD COLUMN list_json text`);
    await q.query(`
      CREATE FUNCTION company_skills_list_json() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        NEW.list_json := json_build_object('id', NEW.id, 'companyId', NEW.company_id, 'key', NEW.key, 'slug', NEW.slug, 'name', NEW.name, 'description', NEW.description,
          'sourceType', NEW.source_type, 'sourceLocator', NEW.source_locator, 'sourceRef', NEW.source_ref, 'trustLevel', NEW.trust_level,
          'compatibility', NEW.compatibility,
          'fileInventory', (SELECT coalesce(json_agg(json_build_object('path', e->>'path', 'kind', e->>'kind')), '[]'::json) FROM jsonb_array_elements(NEW.file_inventory) e),
          'bundled', NEW.bundled, 'editable', NOT NEW.bundled,
          'editableReason', CASE WHEN NEW.bundled THEN 'Bundled service skills are read-only.' END,
          'sourceLabel', CASE coalesce(NEW.metadata->>'sourceKind', NEW.source_type)
              WHEN 'service_bundled' THEN 'Service bundled' WHEN 'catalog' THEN 'Catalog' WHEN 'github' THEN 'GitHub'
              WHEN 'skills_sh' THEN 'Skills index' WHEN 'url' THEN 'URL' WHEN 'local_path' THEN 'Local folder'
              WHEN 'project_scan' THEN 'Project workspace' WHEN 'managed_local' THEN 'Created here' ELSE NEW.source_type END,
          'sourceBadge', CASE coalesce(NEW.metadata->>'sourceKind', NEW.source_type)
              WHEN 'service_bundled' THEN 'service' WHEN 'catalog' THEN 'catalog' WHEN 'github' THEN 'github'
              WHEN 'skills_sh' THEN 'skills_sh' WHEN 'url' THEN 'url' WHEN 'local_path' THEN 'local'
              WHEN 'project_scan' THEN 'project' WHEN 'managed_local' THEN 'managed' ELSE NEW.source_type END,
          'sourcePath', CASE WHEN NEW.source_type = 'local_path' THEN NEW.source_locator END,
          'catalogKind', CASE WHEN jsonb_typeof(NEW.metadata->'catalogKind') = 'string' THEN NEW.metadata->>'catalogKind' END,
          'originHash', CASE WHEN jsonb_typeof(NEW.metadata->'originHash') = 'string' THEN NEW.metadata->>'originHash' END,
          'auditVerdict', NEW.audit->>'verdict',
          'createdAt', to_char(NEW.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'updatedAt', to_char(NEW.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text;
        RETURN NEW;
      END
      $fn$`);
    await q.query(`CREATE TRIGGER company_skills_list_json BEFORE INSERT OR UPDATE ON company_skills FOR EACH ROW EXECUTE FUNCTION company_skills_list_json()`);
    await q.query(`UPDATE company_skills SET id = id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS company_skills_list_json ON company_skills`);
    await q.query(`DROP FUNCTION IF EXISTS company_skills_list_json()`);
    await q.query(`ALTER TABLE company_skills DROP COLUMN IF EXISTS list_json`);
  }
}
