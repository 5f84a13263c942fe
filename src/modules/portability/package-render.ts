import { posix } from 'node:path';
import {
  CompanyPackage,
  FORMAT_VERSION,
  PACKAGE_SCHEMA,
  PkgAgent,
  PkgCompany,
  PkgGoal,
  PkgIssue,
  PkgProject,
  PkgRoutine,
  renderMarkdown,
} from './package-format';

/** The files of a package (export): one markdown file per entity, skills' files as they are. */
export function renderPackage(pkg: CompanyPackage): Record<string, string> {
  const files: Record<string, string> = { 'COMPANY.md': renderCompany(pkg.company) };
  for (const a of pkg.agents) files[a.path] = renderAgent(a);
  for (const g of pkg.goals) files[g.path] = renderGoal(g);
  for (const p of pkg.projects) files[p.path] = renderProject(p);
  for (const s of pkg.skills) for (const f of s.files) files[`${s.path}/${f.path}`] = f.content;
  for (const r of pkg.routines) files[r.path] = renderRoutine(r);
  for (const i of pkg.issues) {
    files[i.path] = renderIssue(i);
    const dir = posix.dirname(i.path);
    for (const d of i.documents)
      files[`${dir}/documents/${d.key}.md`] = renderMarkdown({ key: d.key, title: d.title, format: d.format }, d.body);
  }
  return files;
}

function renderCompany(c: PkgCompany): string {
  return renderMarkdown(
    {
      schema: PACKAGE_SCHEMA,
      kind: 'company',
      slug: c.slug,
      name: c.name,
      description: c.description ?? undefined,
      formatVersion: FORMAT_VERSION,
      brandColor: c.brandColor,
      budgetMonthlyCents: c.budgetMonthlyCents || undefined,
      requireBoardApprovalForNewAgents: c.requireBoardApprovalForNewAgents || undefined,
      requirements: c.secrets.length
        ? { secrets: c.secrets.map((s) => (s.description ? { name: s.name, description: s.description } : { name: s.name })) }
        : undefined,
      labels: c.labels.map((l) => (l.color ? { name: l.name, color: l.color } : { name: l.name })),
      budgetPolicies: c.budgetPolicies,
    },
    c.description,
  );
}

function renderAgent(a: PkgAgent): string {
  return renderMarkdown(
    {
      kind: 'agent',
      slug: a.slug,
      name: a.name,
      role: a.role,
      title: a.title,
      reportsTo: a.reportsTo,
      skills: a.skills,
      capabilities: a.capabilities,
      adapter: { type: a.adapterType, config: a.adapterConfig },
      env: a.env,
      runtimeConfig: a.runtimeConfig,
      budgetMonthlyCents: a.budgetMonthlyCents || undefined,
      metadata: a.metadata,
    },
    a.instructions,
  );
}

function renderGoal(g: PkgGoal): string {
  return renderMarkdown(
    {
      kind: 'goal',
      slug: g.slug,
      name: g.title,
      level: g.level,
      status: g.status,
      parent: g.parent,
      owner: g.owner,
      isCompanyDefault: g.isCompanyDefault || undefined,
    },
    g.description,
  );
}

function renderProject(p: PkgProject): string {
  return renderMarkdown(
    {
      kind: 'project',
      slug: p.slug,
      name: p.name,
      status: p.status,
      owner: p.owner,
      goals: p.goals,
      targetDate: p.targetDate,
      color: p.color,
      env: p.env,
      executionWorkspacePolicy: p.executionWorkspacePolicy,
      workspaces: p.workspaces.map((w) => ({ name: w.name, ...(w.isPrimary ? { isPrimary: true } : {}), ...w.config })),
    },
    p.description,
  );
}

function renderRoutine(r: PkgRoutine): string {
  return renderMarkdown(
    {
      kind: 'task',
      slug: r.slug,
      name: r.title,
      recurring: true,
      assignee: r.assignee,
      project: r.project,
      goal: r.goal,
      priority: r.priority,
      status: r.status,
      concurrencyPolicy: r.concurrencyPolicy,
      catchUpPolicy: r.catchUpPolicy,
      triggers: r.triggers,
    },
    r.description,
  );
}

function renderIssue(i: PkgIssue): string {
  return renderMarkdown(
    {
      kind: 'task',
      slug: i.slug,
      name: i.title,
      assignee: i.assignee,
      project: i.project,
      goal: i.goal,
      parent: i.parent,
      status: i.status,
      priority: i.priority,
      labels: i.labels,
      comments: i.comments.map((c) => (c.author ? { author: c.author, body: c.body } : { body: c.body })),
    },
    i.description,
  );
}
