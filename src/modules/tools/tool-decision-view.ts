import { iso, isoRequired } from '../../database/row-mapping';
import type { ToolAuditEventDto, ToolDecisionDto } from './dto/tool-decision.dto';
import { PREFIX_SEPARATOR } from './tool-gateway.service';
import { toActionRequestDto } from './tool-views';
import type { ActionRequest, InvocationStatus, ToolInvocation } from './tool.types';

const PROFILE_DENIAL = "Denied by the company's tool profiles";

type Outcome = ToolDecisionDto['outcome'];
const OUTCOME: Record<InvocationStatus, Outcome> = {
  awaiting_approval: 'pending',
  executing: 'pending',
  succeeded: 'success',
  failed: 'failure',
  denied: 'denied',
  timed_out: 'timeout',
};

/**
 * Where the call stands now. Its row says what happened to the call itself; a call that returned
 * "pending" to the agent then follows its request (declined: denied, expired: timed out), and a
 * call left executing by a run that has ended (its process or instance died mid-call) failed.
 */
function standing(
  inv: ToolInvocation,
  req: ActionRequest | null,
  runLive: boolean,
): { status: InvocationStatus; reasonCode: string | null } {
  if (inv.status === 'awaiting_approval' && req?.status === 'rejected') return { status: 'denied', reasonCode: 'tool_call_declined' };
  if (inv.status === 'awaiting_approval' && req?.status === 'expired') return { status: 'timed_out', reasonCode: 'tool_call_timed_out' };
  if (inv.status === 'executing' && !runLive) return { status: 'failed', reasonCode: 'interrupted' };
  return { status: inv.status, reasonCode: inv.reasonCode };
}

/** The call's outcome; a call parked on its request ends as the request does (run once approved by a later identical call). */
function outcomeOf(status: InvocationStatus, req: ActionRequest | null): Outcome {
  if (status === 'awaiting_approval' && req?.status === 'executed') return 'success';
  if (status === 'awaiting_approval' && req?.status === 'failed') return 'failure';
  return OUTCOME[status];
}

function approvalStateOf(inv: ToolInvocation, req: ActionRequest | null): ToolDecisionDto['invocation']['approvalState'] {
  if (inv.decision !== 'require_approval' || !req) return 'not_required';
  if (req.status === 'executed' || req.status === 'failed') return 'approved';
  return req.status;
}

/** The call's steps in their logical order (a request the call joined was opened before it), from its row and its request's. */
function auditEvents(
  inv: ToolInvocation,
  req: ActionRequest | null,
  status: InvocationStatus,
  reasonCode: string | null,
): ToolAuditEventDto[] {
  const step = (eventType: ToolAuditEventDto['eventType'], at: Date, summary: string, actorUserId: string | null = null) => ({
    eventType,
    occurredAt: isoRequired(at),
    invocationId: inv.id,
    actionRequestId: inv.actionRequestId,
    actorUserId,
    summary,
  });
  const decided = { allow: 'Allowed by the tool profiles', require_approval: 'Needs the board’s approval', deny: PROFILE_DENIAL };
  const events = [step('policy_decision', inv.createdAt, decided[inv.decision])];
  if (req) {
    events.push(step('approval_requested', req.createdAt, `Action request ${req.id} opened`));
    if (req.decidedAt) {
      const verdict =
        req.status === 'rejected' ? `Declined by the board${req.decisionReason ? `: ${req.decisionReason}` : ''}` : 'Approved by the board';
      events.push(step('approval_resolved', req.decidedAt, verdict, req.decidedByUserId));
    } else if (req.status === 'expired') events.push(step('approval_resolved', req.expiresAt, 'Expired: nobody answered in time'));
  }
  if (inv.startedAt) events.push(step('call_started', inv.startedAt, `Called ${inv.connectionName}`));
  const ended = inv.finishedAt;
  if (ended && status === 'succeeded') events.push(step('call_completed', ended, `Succeeded in ${inv.durationMs ?? 0} ms`));
  if (ended && status === 'failed') events.push(step('call_failed', ended, `Failed (${reasonCode ?? 'error'})`));
  if (ended && status === 'denied' && inv.decision === 'deny') events.push(step('call_denied', ended, PROFILE_DENIAL));
  return events;
}

/** One call of a run as the board UI's run page reads it (the label it shows follows these fields). */
export function toDecision(inv: ToolInvocation, req: ActionRequest | null, runLive: boolean): ToolDecisionDto {
  const { status, reasonCode } = standing(inv, req, runLive);
  const events = auditEvents(inv, req, status, reasonCode);
  const denialReason =
    status !== 'denied' ? null : inv.decision === 'deny' ? PROFILE_DENIAL : req?.decisionReason || 'Declined by the board';
  return {
    invocation: {
      id: inv.toolUseId ?? inv.id,
      invocationId: inv.id,
      toolUseId: inv.toolUseId,
      companyId: inv.companyId,
      agentId: inv.agentId,
      runId: inv.runId,
      connectionId: inv.connectionId,
      connectionName: inv.connectionName,
      toolPrefix: inv.toolPrefix,
      toolName: inv.toolName,
      agentToolName: `${inv.toolPrefix}${PREFIX_SEPARATOR}${inv.toolName}`,
      status,
      approvalState: approvalStateOf(inv, req),
      reasonCode,
      durationMs: inv.durationMs,
      resultBytes: inv.resultBytes,
      createdAt: isoRequired(inv.createdAt),
      startedAt: iso(inv.startedAt),
      finishedAt: iso(inv.finishedAt),
    },
    actionRequest: req ? toActionRequestDto(req) : null,
    pendingAction:
      req && req.status === 'pending' && status === 'awaiting_approval'
        ? {
            actionRequestId: req.id,
            connectionId: req.connectionId,
            toolName: req.toolName,
            previewMarkdown: toActionRequestDto(req).previewMarkdown,
            expiresAt: isoRequired(req.expiresAt),
          }
        : null,
    decision: inv.decision,
    outcome: outcomeOf(status, req),
    denialReason,
    reasonCode,
    auditEvents: events,
    latestAuditEvent: events[events.length - 1] ?? null,
  };
}
