import { bad, CompanyPackage } from './package-format';

/** Every slug reference names an entity of the package (or, for skills, of the package or the target). */
export function assertReferences(pkg: CompanyPackage): void {
  const uniq = (kind: string, items: Array<{ slug: string; path: string }>) => {
    const seen = new Map<string, string>();
    for (const i of items) {
      if (seen.has(i.slug)) throw bad(i.path, `duplicate ${kind} slug "${i.slug}" (also ${seen.get(i.slug)})`);
      seen.set(i.slug, i.path);
    }
    return seen;
  };
  const agents = uniq('agent', pkg.agents);
  const goals = uniq('goal', pkg.goals);
  const projects = uniq('project', pkg.projects);
  uniq('routine', pkg.routines);
  const issues = uniq('task', pkg.issues);
  const labels = new Set(pkg.company.labels.map((l) => l.name.toLowerCase()));
  const ref = (file: string, field: string, slug: string | null, set: Map<string, string>, kind: string) => {
    if (slug !== null && !set.has(slug)) throw bad(file, `${field} refers to a missing ${kind} slug "${slug}"`);
  };
  for (const a of pkg.agents) ref(a.path, 'reportsTo', a.reportsTo, agents, 'agent');
  for (const g of pkg.goals) {
    ref(g.path, 'parent', g.parent, goals, 'goal');
    ref(g.path, 'owner', g.owner, agents, 'agent');
  }
  for (const p of pkg.projects) {
    ref(p.path, 'owner', p.owner, agents, 'agent');
    for (const g of p.goals) ref(p.path, 'goals', g, goals, 'goal');
  }
  for (const r of pkg.routines) {
    ref(r.path, 'assignee', r.assignee, agents, 'agent');
    ref(r.path, 'project', r.project, projects, 'project');
    ref(r.path, 'goal', r.goal, goals, 'goal');
  }
  for (const i of pkg.issues) {
    ref(i.path, 'assignee', i.assignee, agents, 'agent');
    ref(i.path, 'project', i.project, projects, 'project');
    ref(i.path, 'goal', i.goal, goals, 'goal');
    ref(i.path, 'parent', i.parent, issues, 'task');
    for (const l of i.labels)
      if (!labels.has(l.toLowerCase())) throw bad(i.path, `labels refers to a missing label "${l}" (declare it in COMPANY.md labels)`);
  }
  for (const p of pkg.company.budgetPolicies) {
    if (p.scopeType === 'agent') ref('COMPANY.md', 'budgetPolicies[].scope', p.scope ?? '', agents, 'agent');
    if (p.scopeType === 'project') ref('COMPANY.md', 'budgetPolicies[].scope', p.scope ?? '', projects, 'project');
  }
  // cycles in the org chart and goal tree
  const acyclic = (kind: string, items: Array<{ slug: string; path: string }>, parentOf: (slug: string) => string | null) => {
    for (const i of items) {
      const seen = new Set<string>([i.slug]);
      for (let p = parentOf(i.slug); p !== null; p = parentOf(p)) {
        if (seen.has(p)) throw bad(i.path, `${kind} cycle through "${p}"`);
        seen.add(p);
      }
    }
  };
  const agentBySlug = new Map(pkg.agents.map((a) => [a.slug, a]));
  acyclic('reportsTo', pkg.agents, (s) => agentBySlug.get(s)?.reportsTo ?? null);
  const goalBySlug = new Map(pkg.goals.map((g) => [g.slug, g]));
  acyclic('goal parent', pkg.goals, (s) => goalBySlug.get(s)?.parent ?? null);
  const issueBySlug = new Map(pkg.issues.map((i) => [i.slug, i]));
  acyclic('task parent', pkg.issues, (s) => issueBySlug.get(s)?.parent ?? null);
}
