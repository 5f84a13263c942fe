import type { PermissionKey } from '../access/permission-keys';
import { BRIEFS_INSTRUCTIONS, LEARNING_INSTRUCTIONS, REFLECTION_COACH_INSTRUCTIONS } from './built-in-agents.instructions';

export const BUILT_IN_KEYS = ['briefs', 'learning', 'reflection-coach'] as const;
export type BuiltInKey = (typeof BUILT_IN_KEYS)[number];

export const BUILT_IN_STATES = ['not_provisioned', 'pending_approval', 'needs_setup', 'ready', 'paused'] as const;
export type BuiltInState = (typeof BUILT_IN_STATES)[number];

/** A routine a built-in agent owns; created disabled (paused) and enabled by the board. */
export interface BuiltInRoutineDefinition {
  key: string;
  title: string;
  description: string;
  cronExpression: string;
  timezone: string;
  label: string;
}

export interface BuiltInAgentDefinition {
  key: BuiltInKey;
  displayName: string;
  defaultRole: string;
  title: string;
  capabilities: string;
  /** the first is the default */
  allowedAdapterTypes: string[];
  budgetMonthlyCents: number;
  /** what the marker names besides the key: the features this agent serves */
  featureKeys: string[];
  instructions: string;
  /** bumped when the instructions change, so reconcile can tell stale ones */
  instructionsVersion: number;
  /** catalog skills provisioned with the agent (skills module) */
  skills: string[];
  routines: BuiltInRoutineDefinition[];
  /** permission keys granted to the agent, and only these */
  grants: PermissionKey[];
  startsPaused: boolean;
}

const LOCAL_FIRST_B = ['runtime_b_local', 'runtime_a_local', 'runtime_c_local', 'runtime_d_local', 'process'];
const LOCAL_FIRST_A = ['runtime_a_local', 'runtime_b_local', 'runtime_c_local', 'runtime_d_local', 'process'];

/** The registry of the spec (Built-in agent definition). */
export const BUILT_IN_AGENTS: Record<BuiltInKey, BuiltInAgentDefinition> = {
  briefs: {
    key: 'briefs',
    displayName: 'Briefs Agent',
    defaultRole: 'general',
    title: 'Daily briefs',
    capabilities: 'Writes the daily brief of the company: what shipped, what is in progress or blocked, spend, decisions waiting.',
    allowedAdapterTypes: LOCAL_FIRST_B,
    budgetMonthlyCents: 0,
    featureKeys: ['daily_brief'],
    instructions: BRIEFS_INSTRUCTIONS,
    instructionsVersion: 1,
    skills: [],
    routines: [
      {
        key: 'daily-brief',
        title: 'Daily brief',
        description: "Write the daily brief of yesterday's work (shipped, in progress, blocked, spend, decisions waiting).",
        cronExpression: '0 8 * * 1-5',
        timezone: 'UTC',
        label: 'weekday mornings',
      },
    ],
    grants: [],
    startsPaused: false,
  },
  learning: {
    key: 'learning',
    displayName: 'Learning Agent',
    defaultRole: 'general',
    title: 'Company lessons',
    capabilities: 'Turns finished issues into lessons kept in the company lessons document.',
    allowedAdapterTypes: LOCAL_FIRST_B,
    budgetMonthlyCents: 0,
    featureKeys: ['company_lessons'],
    instructions: LEARNING_INSTRUCTIONS,
    instructionsVersion: 1,
    skills: [],
    routines: [
      {
        key: 'lessons-from-finished-issues',
        title: 'Lessons from finished issues',
        description: 'Read the issues finished since the last review and update the company lessons document.',
        cronExpression: '0 17 * * 5',
        timezone: 'UTC',
        label: 'Friday afternoons',
      },
    ],
    grants: [],
    startsPaused: false,
  },
  'reflection-coach': {
    key: 'reflection-coach',
    displayName: 'Reflection Coach',
    defaultRole: 'general',
    title: 'Reflection coach',
    capabilities: "Reviews the agents' recent runs and proposes configuration and skill changes for board review.",
    allowedAdapterTypes: LOCAL_FIRST_A,
    budgetMonthlyCents: 0,
    featureKeys: ['agent_reflection', 'change_suggestions'],
    instructions: REFLECTION_COACH_INSTRUCTIONS,
    instructionsVersion: 1,
    skills: ['reflection-coach'],
    routines: [
      {
        key: 'recent-agent-reflection',
        title: 'Recent agent reflection',
        description:
          'Review the runs of the last seven days of every active agent and propose configuration or skill changes where a pattern needs one.',
        cronExpression: '0 9 * * 1',
        timezone: 'UTC',
        label: 'weekly, Monday mornings',
      },
    ],
    // review-only: propose, never apply (never agents:configure or skills:create)
    grants: ['agents:suggest-changes', 'skills:suggest-changes'],
    startsPaused: true,
  },
};

export const isBuiltInKey = (k: string): k is BuiltInKey => (BUILT_IN_KEYS as readonly string[]).includes(k);

/** The managed-by label of a built-in agent's routines. */
export const managedByOf = (key: BuiltInKey) => `built_in_agent:${key}`;

export const routineDefinition = (def: BuiltInAgentDefinition, routineKey: string) => def.routines.find((r) => r.key === routineKey);
