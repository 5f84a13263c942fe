import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Catalog-installed skills record `metadata.sourceKind = "catalog"` (SPEC: catalog-installed rows
 * have sourceType and metadata.sourceKind `catalog`), bundled ones included: `metadata.catalogKind`
 * (`bundled` | `optional`) and the `bundled` column tell them apart, and the list labels a bundled
 * row "Service bundled" from the column. Rows installed before this migration said
 * `service_bundled`; they are rewritten.
 *
 * The list rows (`list_json`, see SkillListJson) also carry the presentation fields the board UI's
 * skill pickers read: `categories` (metadata `categories`, else the catalog `category`, else []),
 * and `iconUrl`, `color`, `tagline`, `authorName`, `homepageUrl` (from metadata strings, else null).
 */
const str = (k: string) => `CASE WHEN jsonb_typeof(NEW.metadata->'${k}') = 'string' THEN NEW.metadata->>'${k}' END`;
const byKind = (labels: Record<string, string>) =>
  `CASE coalesce(NEW.metadata->>'sourceKind', NEW.source_type) ${Object.entries(labels)
    .map(([k, v]) => `WHEN '${k}' THEN '${v}'`)
    .join(' ')} ELSE NEW.source_type END`;
const labelCase = (labels: Record<string, string>, current: boolean) =>
  current ? `CASE WHEN NEW.bundled THEN '${labels.service_bundled}' ELSE ${byKind(labels)} END` : byKind(labels);
const LABELS = {
  service_bundled: 'Service bundled',
  catalog: 'Catalog',
  github: 'GitHub',
  skills_sh: 'Skills index',
  url: 'URL',
  local_path: 'Local folder',
  project_scan: 'Project workspace',
  managed_local: 'Created here',
};
const BADGES = {
  service_bundled: 'service',
  catalog: 'catalog',
  github: 'github',
  skills_sh: 'skills_sh',
  url: 'url',
  local_path: 'local',
  project_scan: 'project',
  managed_local: 'managed',
};

const PRESENTATION = `'categories', CASE WHEN jsonb_typeof(NEW.metadata->'categories') = 'array'
                               THEN (SELECT coalesce(json_agg(c), '[]'::json) FROM jsonb_array_elements_text(NEW.metadata->'categories') c)
                             WHEN jsonb_typeof(NEW.metadata->'category') = 'string' THEN json_build_array(NEW.metadata->>'category')
                             ELSE '[]'::json END,
          'iconUrl', ${str('iconUrl')}, 'color', ${str('color')}, 'tagline', ${str('tagline')},
          'authorName', ${str('authorName')}, 'homepageUrl', ${str('homepageUrl')},`;

/** `current`: this migration's list row; otherwise the one of SkillListSourceKind (for down). */
const listJsonFunction = (current: boolean) => `
      CREATE OR REPLACE FUNCTION company_skills_list_json() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        NEW.list_json := json_build_object('id', NEW.id, 'companyId', NEW.company_id, 'key', NEW.key, 'slug', NEW.slug, 'name', NEW.name, 'description', NEW.description,
          'sourceType', NEW.source_type, 'sourceLocator', NEW.source_locator, 'sourceRef', NEW.source_ref, 'trustLevel', NEW.trust_level,
          'compatibility', NEW.compatibility,
          'fileInventory', (SELECT coalesce(json_agg(json_build_object('path', e->>'path', 'kind', e->>'kind')), '[]'::json) FROM jsonb_array_elements(NEW.file_inventory) e),
          'bundled', NEW.bundled, 'editable', NOT NEW.bundled,
          'editableReason', CASE WHEN NEW.bundled THEN 'Bundled service skills are read-only.' END,
          'sourceLabel', ${labelCase(LABELS, current)},
          'sourceBadge', ${labelCase(BADGES, current)},
          'sourcePath', CASE WHEN NEW.source_type = 'local_path' THEN NEW.source_locator END,
          'catalogKind', ${str('catalogKind')},
          'originHash', ${str('originHash')},
          'metadata', json_build_object('sourceKind', NEW.metadata->>'sourceKind'),
          ${current ? PRESENTATION : ''}
          'auditVerdict', NEW.audit->>'verdict',
          'createdAt', to_char(NEW.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'updatedAt', to_char(NEW.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text;
        RETURN NEW;
      END
      $fn$`;

export class SkillCatalogSourceKind1763905100000 implements MigrationInterface {
  name = 'SkillCatalogSourceKind1763905100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(listJsonFunction(true));
    await q.query(
      `UPDATE company_skills SET metadata = jsonb_set(metadata, '{sourceKind}', '"catalog"') WHERE source_type = 'catalog' AND metadata->>'sourceKind' = 'service_bundled'`,
    );
    await q.query(`UPDATE company_skills SET id = id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE company_skills SET metadata = jsonb_set(metadata, '{sourceKind}', '"service_bundled"') WHERE source_type = 'catalog' AND bundled AND metadata->>'sourceKind' = 'catalog'`,
    );
    await q.query(listJsonFunction(false));
    await q.query(`UPDATE company_skills SET id = id`);
  }
}
