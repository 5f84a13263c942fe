import { toDecision } from '../../src/modules/tools/tool-decision-view';
import type { ActionRequest, ToolInvocation } from '../../src/modules/tools/tool.types';

const t0 = new Date('2026-01-01T00:00:00.000Z');
const t1 = new Date('2026-01-01T00:00:01.000Z');

const invocation = (p: Partial<ToolInvocation> = {}): ToolInvocation => ({
  id: '11111111-1111-4111-8111-111111111111',
  companyId: 'c',
  agentId: 'a',
  runId: 'r',
  connectionId: 'k',
  connectionName: 'Tickets',
  toolPrefix: 'tickets',
  toolName: 'create_ticket',
  toolUseId: null,
  decision: 'require_approval',
  status: 'awaiting_approval',
  actionRequestId: '22222222-2222-4222-8222-222222222222',
  reasonCode: 'approval_pending',
  durationMs: null,
  resultBytes: null,
  createdAt: t0,
  startedAt: null,
  finishedAt: t1,
  ...p,
});

const request = (status: ActionRequest['status'], p: Partial<ActionRequest> = {}): ActionRequest => ({
  id: '22222222-2222-4222-8222-222222222222',
  companyId: 'c',
  agentId: 'a',
  runId: 'r',
  connectionId: 'k',
  toolName: 'create_ticket',
  arguments: { title: 'x' },
  argumentsDigest: 'd',
  status,
  decisionReason: null,
  decidedByUserId: null,
  decidedAt: null,
  expiresAt: t1,
  executedAt: null,
  createdAt: t0,
  updatedAt: t0,
  ...p,
});

/**
 * A call that returned "pending" to the agent follows its request; a call left executing by a run
 * that ended failed. The board UI's run page derives its label from these fields.
 */
describe('toDecision (a run’s gateway call as the run page reads it)', () => {
  it('a call parked on a request that a later identical call ran: its outcome is the run’s (success, or failure)', () => {
    const ran = toDecision(invocation(), request('executed', { decidedAt: t0, decidedByUserId: 'u' }), true);
    expect(ran).toMatchObject({
      outcome: 'success',
      pendingAction: null,
      invocation: { status: 'awaiting_approval', approvalState: 'approved' },
      actionRequest: { status: 'executed' },
    });
    const failed = toDecision(invocation(), request('failed', { decidedAt: t0 }), true);
    expect(failed).toMatchObject({ outcome: 'failure', invocation: { approvalState: 'approved' }, actionRequest: { status: 'failed' } });
  });

  it('a parked call whose request expired timed out, with the expiry as its last step', () => {
    const d = toDecision(invocation(), request('expired'), true);
    expect(d).toMatchObject({
      outcome: 'timeout',
      reasonCode: 'tool_call_timed_out',
      invocation: { status: 'timed_out', approvalState: 'expired' },
      latestAuditEvent: { eventType: 'approval_resolved', occurredAt: t1.toISOString(), summary: expect.stringContaining('Expired') },
    });
  });

  it('a call still executing is pending while its run is live, and failed (interrupted) once the run ended', () => {
    const executing = invocation({
      decision: 'allow',
      status: 'executing',
      actionRequestId: null,
      reasonCode: null,
      startedAt: t0,
      finishedAt: null,
    });
    expect(toDecision(executing, null, true)).toMatchObject({ outcome: 'pending', reasonCode: null, invocation: { status: 'executing' } });
    expect(toDecision(executing, null, false)).toMatchObject({
      outcome: 'failure',
      reasonCode: 'interrupted',
      invocation: { status: 'failed', approvalState: 'not_required' },
      latestAuditEvent: { eventType: 'call_started' },
    });
  });

  it('the id is the runtime’s tool use id when it sent one (the transcript’s), the invocation’s own id otherwise', () => {
    expect(toDecision(invocation({ toolUseId: 'toolu_01' }), request('pending'), true).invocation).toMatchObject({
      id: 'toolu_01',
      invocationId: invocation().id,
    });
    const pending = toDecision(invocation({ finishedAt: null, reasonCode: null }), request('pending'), true);
    expect(pending.invocation.id).toBe(invocation().id);
    expect(pending.pendingAction).toMatchObject({ actionRequestId: request('pending').id, expiresAt: t1.toISOString() });
  });
});
