import type { ExportSelectionDto, PackageManifestDto } from './dto/portability.dto';
import { FORMAT_VERSION, PACKAGE_SCHEMA } from './package-format';
import type { ExportResult } from './portability-export.service';

/** The manifest of an export: what the package holds, by entity, with the file each lives in. */
export function exportManifest(r: ExportResult, sel: ExportSelectionDto): PackageManifestDto {
  const p = r.pkg;
  return {
    schema: PACKAGE_SCHEMA,
    formatVersion: FORMAT_VERSION,
    company: { slug: p.company.slug, name: p.company.name, description: p.company.description },
    agents: p.agents.map((a) => ({ slug: a.slug, name: a.name, path: a.path, role: a.role, reportsToSlug: a.reportsTo })),
    counts: {
      agents: p.agents.length,
      projects: p.projects.length,
      goals: p.goals.length,
      skills: p.skills.length,
      routines: p.routines.length,
      issues: p.issues.length,
      labels: p.company.labels.length,
      budgetPolicies: p.company.budgetPolicies.length,
    },
    requiredSecrets: p.company.secrets,
    includes: {
      company: true,
      agents: sel.includeAgents !== false,
      projects: true,
      skills: sel.includeSkills !== false,
      routines: sel.includeRoutines !== false,
      issues: sel.includeIssues === true,
    },
    projects: p.projects.map((x) => ({ slug: x.slug, name: x.name, path: x.path, description: x.description })),
    skills: p.skills.map((s) => ({ slug: s.slug, key: r.skillKeys.get(s.slug) ?? s.slug, path: `${s.path}/SKILL.md` })),
    issues: [
      ...p.issues.map((i) => ({
        slug: i.slug,
        title: i.title,
        path: i.path,
        recurring: false,
        identifier: i.slug.toUpperCase(),
        projectSlug: i.project,
        assigneeAgentSlug: i.assignee,
        status: i.status,
      })),
      ...p.routines.map((t) => ({
        slug: t.slug,
        title: t.title,
        path: t.path,
        recurring: true,
        identifier: null,
        projectSlug: t.project,
        assigneeAgentSlug: t.assignee,
        status: t.status,
      })),
    ],
    embeddedAssets: [],
  };
}

/** Only the selected files (all when no selection is given). */
export function selectFiles(files: Record<string, string>, selected: string[] | undefined): Record<string, string> {
  if (!selected) return files;
  const keep = new Set(selected);
  return Object.fromEntries(Object.entries(files).filter(([path]) => keep.has(path)));
}
