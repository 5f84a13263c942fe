import { ApiProperty } from '@nestjs/swagger';
import { INVOCATION_DECISIONS, INVOCATION_STATUSES } from '../tool.types';
import { ActionRequestDto } from './tool-action-request.dto';

export const APPROVAL_STATES = ['not_required', 'pending', 'approved', 'rejected', 'expired'] as const;
export const DECISION_OUTCOMES = ['pending', 'success', 'failure', 'denied', 'timeout'] as const;
export const AUDIT_EVENT_TYPES = [
  'policy_decision',
  'approval_requested',
  'approval_resolved',
  'call_started',
  'call_completed',
  'call_failed',
  'call_denied',
] as const;

/** One call of a connection's tool through the gateway, as the run made it. */
export class ToolInvocationDto {
  /**
   * The call's id as the board UI pairs it with the run's transcript: the id the agent's runtime
   * gave the call when it sent one (Claude Code's tool use id, `toolu_…`), otherwise `invocationId`.
   */
  id: string;
  /** the invocation's own id (tool_invocations) */
  invocationId: string;
  /** the runtime's id of the call (MCP `_meta["claudecode/toolUseId"]`), when it sent one */
  @ApiProperty({ nullable: true, type: String }) toolUseId: string | null;
  companyId: string;
  agentId: string;
  @ApiProperty({ nullable: true, type: String }) runId: string | null;
  connectionId: string;
  connectionName: string;
  toolPrefix: string;
  /** the connection's own name of the tool */
  toolName: string;
  /** the name the agent called: `<toolPrefix>__<toolName>` */
  agentToolName: string;
  /**
   * What became of the call. A call that returned "pending" to the agent stays `awaiting_approval`
   * until its request is declined (`denied`) or expires (`timed_out`); a call still `executing` when
   * its run ended reads as `failed` (reasonCode `interrupted`).
   */
  @ApiProperty({ enum: INVOCATION_STATUSES }) status: string;
  /** `not_required` for calls no approval governs; otherwise the board's answer (`approved` also once the request ran) */
  @ApiProperty({ enum: APPROVAL_STATES }) approvalState: string;
  @ApiProperty({ nullable: true, type: String }) reasonCode: string | null;
  /** how long the remote server took, for calls that reached it */
  @ApiProperty({ nullable: true, type: Number }) durationMs: number | null;
  @ApiProperty({ nullable: true, type: Number }) resultBytes: number | null;
  createdAt: string;
  @ApiProperty({ nullable: true, type: String }) startedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) finishedAt: string | null;
}

/** The board's open question: the request waits for an approval or a decline. */
export class PendingToolActionDto {
  actionRequestId: string;
  connectionId: string;
  toolName: string;
  /** what the board sees: the tool and its arguments (secrets redacted) */
  previewMarkdown: string;
  /** the request times out then (the connection's `approvalTimeoutSec`) */
  expiresAt: string;
}

/** A step of the call, from its record and its action request's. */
export class ToolAuditEventDto {
  @ApiProperty({ enum: AUDIT_EVENT_TYPES }) eventType: string;
  occurredAt: string;
  invocationId: string;
  @ApiProperty({ nullable: true, type: String }) actionRequestId: string | null;
  /** the board user who decided (`approval_resolved`) */
  @ApiProperty({ nullable: true, type: String }) actorUserId: string | null;
  /** the step in words */
  summary: string;
}

/** What the gateway decided of one call of the run, and what became of it. */
export class ToolDecisionDto {
  @ApiProperty({ type: ToolInvocationDto }) invocation: ToolInvocationDto;
  /** the "ask" request the call waited on (null for calls a profile allowed or denied) */
  @ApiProperty({ nullable: true, type: ActionRequestDto }) actionRequest: ActionRequestDto | null;
  /** set while the request waits for the board */
  @ApiProperty({ nullable: true, type: PendingToolActionDto }) pendingAction: PendingToolActionDto | null;
  /** the agent's profiles: `allow`, `require_approval` (ask) or `deny` */
  @ApiProperty({ enum: INVOCATION_DECISIONS }) decision: string;
  /**
   * How the call ended: `pending` while it waits or runs; for a call that returned "pending", how its
   * request ended (a later identical call runs it once approved).
   */
  @ApiProperty({ enum: DECISION_OUTCOMES }) outcome: string;
  /** why the call was refused: by a profile, or the board's reason for declining */
  @ApiProperty({ nullable: true, type: String }) denialReason: string | null;
  /** a stable code: tool_denied, tool_call_declined, tool_call_timed_out, approval_pending, approval_used, tool_error, remote_unreachable, url_not_allowed, interrupted */
  @ApiProperty({ nullable: true, type: String }) reasonCode: string | null;
  @ApiProperty({ type: [ToolAuditEventDto] }) auditEvents: ToolAuditEventDto[];
  @ApiProperty({ nullable: true, type: ToolAuditEventDto }) latestAuditEvent: ToolAuditEventDto | null;
}

export class RunToolDecisionsDto {
  /** the run's gateway calls in the order they were made (its last 1000) */
  @ApiProperty({ type: [ToolDecisionDto] }) decisions: ToolDecisionDto[];
}
