import { domainErrors, type ErrorTable } from '../../common/errors/error-codes';

/** What /api/mcp may answer besides access errors (tool errors are MCP results, not HTTP errors). */
export const MCP_ERRORS = {
  mcp_host_not_allowed: 403,
} as const satisfies ErrorTable;

export const mcpError = domainErrors(MCP_ERRORS);
