/**
 * Who owns which table: the one map. Each table is read and written only by its owner's
 * repositories (a module folder under src/modules, or a part of src/common); another module asks
 * through what the owner exports. `company`: the column that names the tenant (`company_id`, or
 * `id` for `companies` itself); null for instance-wide tables and for child tables reached only
 * through their company-owned parent.
 *
 * The ownership test (test/unit/sql-ownership.spec.ts) reads every repository's SQL against this
 * map, and docs/architecture.md's table is generated from it (`npm run docs:tables`).
 */
export interface TableOwner {
  owner: string;
  company: 'company_id' | 'id' | null;
}

const owned = (owner: string, company: TableOwner['company'] = 'company_id'): TableOwner => ({ owner, company });
const instanceWide = (owner: string): TableOwner => ({ owner, company: null });

export const TABLE_OWNERS = {
  companies: owned('companies', 'id'),

  users: instanceWide('users'),
  user_sessions: instanceWide('users'),
  board_api_tokens: instanceWide('users'),
  board_claims: instanceWide('users'),
  auth_rate_limits: instanceWide('users'),

  instance_settings: instanceWide('instance'),
  database_backups: instanceWide('instance'),
  database_backup_schedule: instanceWide('instance'),

  company_memberships: owned('access'),
  invites: owned('access'),
  join_requests: owned('access'),
  principal_permission_grants: owned('access'),

  agents: owned('agents'),
  agent_api_keys: owned('agents'),

  issues: owned('issues'),
  issue_comments: owned('issues'),
  issue_relations: owned('issues'),
  labels: owned('issues'),
  issue_labels: owned('issues'),
  issue_user_states: owned('issues'),
  issue_interactions: owned('issues'),
  issue_tree_holds: owned('issues'),

  issue_documents: owned('documents'),
  issue_document_revisions: owned('documents'),
  document_annotation_threads: owned('documents'),
  document_annotation_comments: owned('documents'),
  issue_plan_decompositions: owned('documents'),
  issue_attachments: owned('attachments'),
  issue_work_products: owned('artifacts'),

  assets: owned('storage'),
  company_secrets: owned('secrets'),
  company_secret_versions: owned('secrets'),
  secret_access_events: owned('secrets'),
  user_secret_definitions: owned('secrets'),
  user_secret_values: owned('secrets'),
  secret_proposals: owned('secrets'),
  ai_connections: owned('ai-connections'),

  goals: owned('goals'),
  projects: owned('projects'),
  project_goals: instanceWide('projects'),
  project_workspaces: owned('projects'),
  runtime_service_operations: owned('projects'),

  heartbeat_runs: owned('heartbeat'),
  agent_wakeup_requests: owned('heartbeat'),

  budget_policies: owned('budgets'),
  budget_incidents: owned('budgets'),
  budget_window_resets: instanceWide('budgets'),
  cost_events: owned('costs'),
  cost_usage: owned('budgets'),
  finance_events: owned('costs'),

  approvals: owned('approvals'),
  activity_log: owned('common/activity'),
  activity_chain_heads: owned('common/activity'),
  activity_chain_anchors: owned('activity'),
  activity_anchor_schedule: instanceWide('activity'),

  inbox_dismissals: owned('preferences'),
  resource_memberships: owned('preferences'),
  sidebar_preferences: owned('preferences'),

  routines: owned('routines'),
  routine_triggers: owned('routines'),
  routine_runs: owned('routines'),
  folders: owned('folders'),
  company_skills: owned('skills'),
  company_skill_files: owned('skills'),

  plugins: instanceWide('plugins'),
  plugin_job_runs: instanceWide('plugins'),
  plugin_event_outbox: owned('plugins'),
  plugin_local_folders: owned('plugins'),
  external_adapters: instanceWide('adapters'),
  adapter_settings: instanceWide('adapters'),

  live_events: owned('common/events'),
  live_event_counters: owned('common/events'),
  live_event_watch: owned('common/events'),
  feedback_traces: owned('feedback'),

  tool_applications: owned('tools'),
  tool_connections: owned('tools'),
  tool_catalog_entries: owned('tools'),
  tool_profiles: owned('tools'),
  tool_profile_entries: owned('tools'),
  tool_profile_bindings: owned('tools'),
  tool_action_requests: owned('tools'),
  tool_invocations: owned('tools'),
} as const satisfies Record<string, TableOwner>;

export type TableName = keyof typeof TABLE_OWNERS;

/**
 * The kinds of company records a request may name (`@RefersTo` fields, routes without
 * `:companyId`), each with the table that holds them. The table's owner registers which company
 * its records belong to, with a provider generated from this map
 * (`recordCompanies('<owner>')`, src/common/references/record-company.repository.ts).
 */
export const RECORD_TABLES = {
  agent: 'agents',
  issue: 'issues',
  project: 'projects',
  goal: 'goals',
  workspace: 'project_workspaces',
  label: 'labels',
  comment: 'issue_comments',
  run: 'heartbeat_runs',
  cost_event: 'cost_events',
  attachment: 'issue_attachments',
  asset: 'assets',
  secret: 'company_secrets',
  routine: 'routines',
  routine_trigger: 'routine_triggers',
  tool_connection: 'tool_connections',
  tool_profile: 'tool_profiles',
  tool_profile_entry: 'tool_profile_entries',
  invite: 'invites',
  approval: 'approvals',
  document_revision: 'issue_document_revisions',
  folder: 'folders',
  tool_action_request: 'tool_action_requests',
} as const satisfies Record<string, TableName>;

export type RecordKind = keyof typeof RECORD_TABLES;

/**
 * Record kinds a path may also name by another key than their id, with its column: an issue by its
 * identifier (`ABC-12`). The key must be unique across the instance, not just within a company, for
 * the route's company to follow from it: `issues_identifier_key` is unique on its own (issue
 * prefixes are unique per instance, `companies_issue_prefix_key`), so an identifier names at most
 * one issue of all companies.
 */
export const RECORD_KEYS = {
  issue: 'identifier',
} as const satisfies Partial<Record<RecordKind, string>>;

/**
 * Database functions through which a module lets others change its tables inside their own
 * statement (a port in SQL, for a hot path where a round trip would lengthen a row lock's hold).
 * The owner's migration defines the function; only the listed modules' repositories call it
 * (test/unit/sql-ownership.spec.ts).
 */
export interface DatabasePort {
  owner: string;
  writes: TableName[];
  callers: string[];
  reason: string;
}

export const DATABASE_PORTS: Record<string, DatabasePort> = {
  take_issue_numbers: {
    owner: 'companies',
    writes: ['companies'],
    callers: ['companies', 'issues'],
    reason:
      "a new issue takes its number from the company's counter inside its INSERT: the counter's row lock serialises the company's creates, so it is held for one round trip less",
  },
};

/**
 * Reads of another module's table that stay a join (a read model, or a measured hot path), each
 * with its reason. Everything else asks the owner; writes to another module's table never appear
 * here (the owner writes, through a port it exports or one the lower module declares).
 * Keyed by the reading module; `tables` lists the foreign tables its statements may read.
 */
export interface ForeignRead {
  tables: TableName[];
  reason: string;
}

export const FOREIGN_READS: Record<string, ForeignRead[]> = {
  agents: [
    {
      tables: ['cost_usage'],
      reason:
        "spentMonthlyCents mirrors budgets' monthly running total: recomputed in the cost event's pipeline, right after the accumulation (hot path: no round trip to hand the value over)",
    },
    {
      tables: ['companies'],
      reason:
        "a hire reads the company's require-board-approval setting FOR SHARE, holding it until the hire commits (a lock, not a lookup)",
    },
  ],
  budgets: [
    { tables: ['companies', 'agents', 'projects'], reason: "the scope's name on each policy row (read model of the budgets page)" },
    { tables: ['heartbeat_runs'], reason: 'the observed value of run_count policies: one indexed count per policy and window' },
    { tables: ['companies'], reason: 'the month start and the sweep go through every company id (instance-wide tick)' },
    { tables: ['agents', 'projects'], reason: 'a policy scope must belong to the company: one indexed existence check' },
    { tables: ['agents', 'projects', 'approvals'], reason: 'paused and pending counts of the budget overview (read model)' },
  ],
  companies: [
    { tables: ['agents', 'issues'], reason: 'agent and issue counts per company on the companies page (read model)' },
    {
      tables: ['cost_usage'],
      reason:
        "spentMonthlyCents mirrors budgets' monthly running total: recomputed in the cost event's pipeline, right after the accumulation (hot path: no round trip to hand the value over)",
    },
  ],
  costs: [
    {
      tables: ['agents', 'projects', 'goals', 'heartbeat_runs'],
      reason: 'the references a cost or finance event names belong to its company: checked in the insert pipeline (measured hot path)',
    },
    { tables: ['agents', 'projects'], reason: 'agent and project names and statuses on the cost reports (read model)' },
    { tables: ['cost_usage'], reason: "range and lifetime reports read budgets' running totals instead of summing every event" },
  ],
  portability: [
    {
      tables: [
        'agents',
        'projects',
        'goals',
        'labels',
        'budget_policies',
        'routines',
        'company_skills',
        'issues',
        'issue_comments',
        'issue_documents',
        'issue_document_revisions',
        'company_secrets',
        'agent_api_keys',
        'cost_events',
        'finance_events',
        'activity_log',
        'heartbeat_runs',
        'approvals',
        'issue_attachments',
        'issue_work_products',
        'issue_interactions',
        'budget_incidents',
      ],
      reason:
        "read model: the export fidelity page counts the company's records by kind (what a package keeps and drops), one statement of indexed counts",
    },
  ],
  board: [
    {
      tables: [
        'approvals',
        'join_requests',
        'users',
        'issue_interactions',
        'issues',
        'issue_relations',
        'agents',
        'projects',
        'heartbeat_runs',
        'budget_incidents',
        'companies',
      ],
      reason:
        "read model: the board's attention queue lists what waits for it across domains (pending approvals and join requests, open questions, blocked issues, failed runs, budget incidents, agents in error), one indexed statement per source",
    },
    {
      tables: ['heartbeat_runs', 'activity_log', 'issues', 'agents', 'users'],
      reason: "read model: the company timeline joins runs and issue activity per issue of a time window, with the actors' names",
    },
  ],
  dashboard: [
    {
      tables: ['agents', 'issues', 'approvals', 'budget_incidents', 'projects', 'companies', 'heartbeat_runs'],
      reason: "the company dashboard's counts in one statement of indexed counts (read model, measured hot path)",
    },
  ],
  goals: [
    { tables: ['agents'], reason: "a goal's owner agent must be a live agent of the company: one indexed existence check (RefersTo)" },
  ],
  projects: [{ tables: ['goals'], reason: "the linked goals' summaries on the project pages (read model)" }],
  'common/auth': [
    {
      tables: ['companies'],
      reason: 'hot path: whether the company of a company-scoped route exists, on every such request (cached per instance)',
    },
  ],
  heartbeat: [
    {
      tables: ['agents'],
      reason:
        "hot paths: the dispatcher's claim (each agent's concurrency limit, in the claim query) and the run-token check on every request " +
        "with a run token; the live-runs read model (agent names); the recovery sweep (each run's agent grace period)",
    },
    {
      tables: ['companies'],
      reason: "the wake gate, on every wake: the company's status and monthly budget, read in the agent's company under the agent lock",
    },
    {
      tables: ['issues', 'projects', 'project_workspaces'],
      reason:
        "the engine cannot import issues or projects (they import it): a timer wake's open assigned issues, a cancelled project's " +
        "issues, and a run's project and workspace directory at launch, each read in the run's company",
    },
  ],
  routines: [
    {
      tables: ['issues'],
      reason: "read model: the runs pages show each execution's issue, and skip-while-open reads that issue's status (one join)",
    },
    {
      tables: ['projects', 'goals', 'issues', 'agents'],
      reason: "a routine's references must be records of its company: one existence check across the owners' tables per save",
    },
    {
      tables: ['companies', 'agents'],
      reason: "the scheduler's firing checks the company's and the assignee's status in one round trip per firing",
    },
  ],
  artifacts: [
    {
      tables: ['issue_documents', 'issue_document_revisions', 'issue_attachments', 'assets', 'issues', 'projects', 'agents'],
      reason:
        'the company artifacts page is one read model over documents, attachments (with their assets) and work products, joined with their issue, project and agent: filtered, grouped and keyset-paged in one statement',
    },
  ],
  attachments: [
    {
      tables: ['assets'],
      reason:
        "an attachment row is shown with its asset's file fields (type, size, sha256, storage key): a join per attachment, in the same statement",
    },
  ],
  feedback: [
    {
      tables: ['issue_comments', 'issue_document_revisions', 'issue_documents', 'heartbeat_runs', 'issues', 'companies'],
      reason:
        'a vote names a comment, document revision or run of the company: its issue, agent and run are resolved when voting and its content shown in the list; the list joins issues for the project filter and the company for its sharing consent (a read model of the feedback page; feedback imports none of those modules)',
    },
  ],
  issues: [
    {
      tables: ['heartbeat_runs'],
      reason:
        "a checkout's conditional UPDATE tests, in the same statement, whether the current checkout run is still live (queued or running): the race between concurrent checkouts is decided by that one statement",
    },
    {
      tables: ['heartbeat_runs', 'activity_log'],
      reason:
        "the issue's runs page, the issues of a run and the agent's inbox-lite join issues with the runs touching them (issue column, context snapshot, checkout, the issue's activity): read-model joins, one statement each",
    },
    {
      tables: ['projects', 'goals'],
      reason:
        'the issue detail page reads the goal of the issue and of its project (and projects linked in its description; the project itself comes from ProjectsService); placement and checkout check that a project or goal is of the company and that the project is not paused, inside their own statements: read-only, by id, within the company',
    },
  ],
  preferences: [
    {
      tables: ['approvals', 'join_requests', 'heartbeat_runs'],
      reason:
        "the inbox badge counts pending approvals and join requests and the last day's failed runs of the company (ids only, for the user's dismissals)",
    },
    {
      tables: ['projects', 'agents'],
      reason:
        "the resources a user may join or leave, and the sidebar's project and agent order, are the company's projects and live agents (ids only); preferences sits below projects (which imports it) in the import graph",
    },
  ],
  skills: [
    {
      tables: ['agents', 'folders'],
      reason:
        "the skills list counts, per skill, the live agents that desire it (agents.adapter_config) and shows its folder path; a run launch reads the agent's adapter config with its skills and files in one round trip (the launch hook delays the process); the usage page lists the agents' desired keys",
    },
  ],
  access: [
    {
      tables: ['users', 'agents'],
      reason: "read model: the members pages show each member's user or agent (name, email, image, status), one join per page",
    },
    {
      tables: ['users'],
      reason: "read model: the company's member directory shows each human member's profile, the invites page who sent each invite",
    },
    {
      tables: ['companies'],
      reason: "read model: an invite's public view and a user's company list show the company's name (and logo, description)",
    },
  ],
  activity: [
    {
      tables: ['activity_log', 'activity_chain_heads'],
      reason:
        'the read side of the activity trail: common/activity writes it (one recorder for every module), this module serves the feeds, the audit and the chain verification',
    },
    {
      tables: ['issues'],
      reason:
        "read model: the feeds leave out hidden issues' activity and the audit page shows the issue a record is about, in the same query",
    },
  ],
  authorization: [
    {
      tables: ['agents', 'company_memberships', 'principal_permission_grants', 'projects'],
      reason:
        'the authorization decision runs on every guarded mutation (hot path) and its owners (agents, access, projects) import this module',
    },
  ],
  cli: [
    {
      tables: ['users', 'heartbeat_runs', 'company_secret_versions'],
      reason:
        "the CLI's offline checks (doctor, backup restore checks) read the database without a running service: is there an instance owner, which run logs and master keys the data refers to",
    },
  ],
  'common/events': [
    {
      tables: ['companies'],
      reason:
        'an instance-level event (a plugin worker crashed) goes to every company that is not archived; common cannot import companies',
    },
  ],
  metrics: [
    {
      tables: ['heartbeat_runs', 'agent_wakeup_requests', 'budget_incidents'],
      reason: "the operators' gauges (GET /api/metrics) count runs, wakeups and budget incidents of the whole instance at each scrape",
    },
  ],
  secrets: [
    {
      tables: ['company_memberships'],
      reason: "read model: a user secret's coverage counts the company's active members with and without a value",
    },
    { tables: ['agents'], reason: 'read model: a secret proposal shows the name of the agent that made it' },
    {
      tables: ['heartbeat_runs', 'agents', 'projects'],
      reason:
        "run-bound secret reads check the run, the agent's trust and the env bindings of agent and project; heartbeat, agents and projects import secrets",
    },
  ],
  users: [{ tables: ['company_memberships'], reason: "read model: a company user's profile page shows their membership of that company" }],
};
