import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The skills list's rows (`list_json`, kept by a trigger; see SkillListJson) carry the source kind
 * as `metadata: { sourceKind }`: a catalog-installed row reads `sourceType` and
 * `metadata.sourceKind` = `catalog` in the list as in the detail (the rest of `metadata` stays on
 * the detail route). Existing rows are rewritten.
 */
const listJsonFunction = (withSourceKind: boolean) => `
      CREATE OR REPLACE FUNCTION company_skills_list_json() RETURNS trigger LANGUAGE plpgsql AS $fn$
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
          ${withSourceKind ? "'metadata', json_build_object('sourceKind', NEW.metadata->>'sourceKind')," : ''}
          'auditVerdict', NEW.audit->>'verdict',
          'createdAt', to_char(NEW.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'updatedAt', to_char(NEW.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text;
        RETURN NEW;
      END
      $fn$`;

export class SkillListSourceKind1763815000000 implements MigrationInterface {
  name = 'SkillListSourceKind1763815000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(listJsonFunction(true));
    await q.query(`UPDATE company_skills SET id = id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(listJsonFunction(false));
    await q.query(`UPDATE company_skills SET id = id`);
  }
}
