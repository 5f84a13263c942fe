import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the issues area (issues, checkout, comments, relations, labels, list) may answer besides validation and access errors. */
export const ISSUE_ERRORS = {
  run_id_required: 403,
  issue_not_checked_out: 409,
  issue_checked_out: 409,
  checkout_run_mismatch: 409,
  checkout_conflict: 409,
  status_mismatch: 409,
  agent_not_available: 409,
  project_paused: 409,
  label_name_taken: 409,
  invalid_reference: 422,
  blocker_self: 422,
  blocker_cycle: 422,
  parent_cycle: 422,
  interrupt_requires_comment: 400,
  invalid_cursor: 400,
  // questions asked on an issue (issue-interactions.service.ts)
  interaction_answered: 409,
  invalid_option: 422,
  option_required: 422,
  // paused subtrees (issue-tree-holds.service.ts)
  issue_tree_already_paused: 409,
  issue_tree_held_by_ancestor: 409,
  issue_tree_not_paused: 409,
  issue_tree_paused: 409,
} as const satisfies ErrorTable;

export const issueError = domainErrors(ISSUE_ERRORS);
