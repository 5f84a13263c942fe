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
  cost_usage: owned('costs'),
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
} as const satisfies Record<string, TableOwner>;

export type TableName = keyof typeof TABLE_OWNERS;

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
  access: [
    {
      tables: ['users', 'agents'],
      reason: "read model: the members pages show each member's user or agent (name, email, image, status), one join per page",
    },
    { tables: ['users'], reason: "read model: the company's member directory shows each human member's profile" },
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
      tables: ['heartbeat_runs', 'agents', 'projects'],
      reason:
        "run-bound secret reads check the run, the agent's trust and the env bindings of agent and project; heartbeat, agents and projects import secrets",
    },
  ],
  users: [{ tables: ['company_memberships'], reason: "read model: a company user's profile page shows their membership of that company" }],
};
