import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What the built-in agents area answers besides validation and access errors. */
export const BUILT_IN_AGENT_ERRORS = {
  built_in_agents_disabled: 404,
  unknown_built_in_agent: 404,
  unknown_built_in_routine: 404,
  adapter_type_not_allowed: 422,
  built_in_agent_not_configured: 412,
  skills_unavailable: 412,
  invalid_suggestion: 422,
} as const satisfies ErrorTable;

export const builtInError = domainErrors(BUILT_IN_AGENT_ERRORS);

/** Every built-in agent route answers this while the instance feature flag is off. */
export const DISABLED_MESSAGE = 'Built-in agents are not enabled.';

/** The warning internal features get when the built-in agent they need is paused. */
export const PAUSED_WARNING = 'built_in_agent_paused';
