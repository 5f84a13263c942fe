import type { ExportFidelityDto, FidelityEntryDto } from './dto/fidelity.dto';
import type { CompanyInventory } from './fidelity.repository';

type Kind = keyof CompanyInventory;

/** What a package keeps of each kind, and how. */
const KEPT: Array<[Kind, string]> = [
  [
    'agents',
    'agents/<slug>/AGENTS.md: role, reporting line, adapter and runtime configuration, instructions; secret references become declarations',
  ],
  ['projects', 'projects/<slug>/PROJECT.md with workspaces and env (secret references become declarations)'],
  ['goals', 'goals/<slug>/GOAL.md'],
  ['labels', 'in COMPANY.md'],
  ['budgetPolicies', 'in COMPANY.md (company and agent monthly budgets travel with their records)'],
  ['routines', 'routines/<slug>/TASK.md with their triggers (include.routines)'],
  ['skills', 'skills/<slug>/ with their text files (binary files are left out)'],
  ['issues', 'tasks/<slug>/TASK.md, only with include.issues'],
  ['comments', 'inside their task, only with include.issues'],
  ['documents', 'their latest revision, inside their task, only with include.issues'],
  ['secrets', 'declared by name when something refers to them (requirements.secrets); never their values'],
];

/** What a package never carries, and why. */
const DROPPED: Array<[Kind, string]> = [
  ['terminatedAgents', 'terminated agents are not part of the org chart'],
  ['bundledSkills', 'bundled skills ship with every service'],
  ['hiddenIssues', 'hidden issues are not exported'],
  ['documentRevisions', 'only the latest revision of a document is exported'],
  ['agentApiKeys', 'API keys are never exported; create new keys after import'],
  ['costEvents', 'cost history is not exported'],
  ['financeEvents', 'finance history is not exported'],
  ['activityEntries', 'the activity trail is not exported'],
  ['heartbeatRuns', 'runs and their logs are not exported'],
  ['approvals', 'approvals are not exported'],
  ['attachments', 'attachments are not exported'],
  ['workProducts', 'work products are not exported'],
  ['interactions', 'questions to the board and their answers are not exported'],
  ['budgetIncidents', 'budget incidents are not exported'],
];

const LABELS: Record<Kind, [string, string]> = {
  agents: ['agent', 'agents'],
  terminatedAgents: ['terminated agent', 'terminated agents'],
  projects: ['project', 'projects'],
  goals: ['goal', 'goals'],
  labels: ['label', 'labels'],
  budgetPolicies: ['budget policy', 'budget policies'],
  routines: ['routine', 'routines'],
  skills: ['skill', 'skills'],
  bundledSkills: ['bundled skill', 'bundled skills'],
  issues: ['issue', 'issues'],
  hiddenIssues: ['hidden issue', 'hidden issues'],
  comments: ['comment', 'comments'],
  documents: ['document', 'documents'],
  documentRevisions: ['older document revision', 'older document revisions'],
  secrets: ['secret', 'secrets'],
  agentApiKeys: ['agent API key', 'agent API keys'],
  costEvents: ['cost event', 'cost events'],
  financeEvents: ['finance event', 'finance events'],
  activityEntries: ['activity entry', 'activity entries'],
  heartbeatRuns: ['run', 'runs'],
  approvals: ['approval', 'approvals'],
  attachments: ['attachment', 'attachments'],
  workProducts: ['work product', 'work products'],
  interactions: ['question to the board', 'questions to the board'],
  budgetIncidents: ['budget incident', 'budget incidents'],
};

const label = (k: Kind, n: number) => `${n} ${LABELS[k][n === 1 ? 0 : 1]}`;

/** The fidelity report of an export of a company holding `inv` (see docs/api/portability.md). */
export function exportFidelity(companyId: string, raw: CompanyInventory): ExportFidelityDto {
  // older revisions: every revision but each document's latest
  const inv: CompanyInventory = { ...raw, documentRevisions: Math.max(raw.documentRevisions - raw.documents, 0) };
  const kept: FidelityEntryDto[] = KEPT.map(([kind, how]) => ({ kind, count: inv[kind], note: how }));
  const dropped: FidelityEntryDto[] = DROPPED.map(([kind, why]) => ({ kind, count: inv[kind], note: why }));
  const warnings = [
    ...dropped
      .filter((d) => d.count > 0)
      .map((d) => ({
        code: `${d.kind}_not_exported`,
        severity: 'warning' as const,
        message: `${label(d.kind as Kind, d.count)}: ${d.note}.`,
      })),
    ...(inv.secrets > 0
      ? [
          {
            code: 'secret_values_not_exported',
            severity: 'info' as const,
            message: `${label('secrets', inv.secrets)}: values are never exported; set them again after import.`,
          },
        ]
      : []),
    ...(inv.issues > 0
      ? [
          {
            code: 'issues_optional',
            severity: 'info' as const,
            message: `${label('issues', inv.issues)}: exported only when tasks are included.`,
          },
        ]
      : []),
  ];
  return { schema: 'export-fidelity/v1', companyId, generatedAt: new Date().toISOString(), counts: inv, kept, dropped, warnings };
}
