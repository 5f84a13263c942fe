import type { WakeComment, WakeContext, WakeDetails } from './run.types';

/** Longer comments and issue descriptions are cut here, with where to read the rest. */
export const WAKE_TEXT_LIMIT = 2_000;
/** at most this many comments are quoted (the newest); the rest are named by count */
export const WAKE_COMMENT_LIMIT = 5;

/** What a wake reason means to the agent (the reasons of issue wakes, docs/runtimes-cli.md). */
const REASONS: Record<string, string> = {
  issue_assigned: 'you were assigned this issue',
  mentioned: 'you were mentioned in a comment',
  issue_commented: 'a comment was added to an issue assigned to you',
  blocker_resolved: 'an issue that blocked this one was closed',
  interaction_answered: 'your question on this issue was answered',
};

function why(w: WakeContext, d: WakeDetails | null | undefined): string {
  const reason = w.reason ? (REASONS[w.reason] ?? w.reason) : null;
  const routine = d?.issue?.originKind === 'routine_execution' ? ` (the issue was created by routine ${d.issue.originId ?? ''})` : '';
  if (w.source === 'timer') return `your heartbeat timer${reason ? `: ${reason}` : ''}`;
  if (w.source === 'assignment') return `${reason ?? 'you were assigned an issue'}${routine}`;
  if (w.source === 'on_demand') return reason ?? 'a wake on demand';
  return `${reason ?? w.source}${routine}`;
}

/** `text` as a quote, cut at WAKE_TEXT_LIMIT characters with a pointer to where the whole text is. */
function quote(text: string, whole: string): string[] {
  const cut = text.length > WAKE_TEXT_LIMIT;
  const lines = (cut ? text.slice(0, WAKE_TEXT_LIMIT) : text).split('\n').map((l) => `> ${l}`);
  if (cut) lines.push(`[cut at ${WAKE_TEXT_LIMIT} of ${text.length} characters; the whole text: ${whole}]`);
  return lines;
}

function comment(c: WakeComment): string[] {
  const author = c.author.name ? `${c.author.name} (${c.author.kind} ${c.author.id})` : `a board user (user ${c.author.id})`;
  return [`Comment by ${author}, ${c.createdAt} (id ${c.id}):`, ...quote(c.body, `GET /api/issues/${c.issueId}/comments/${c.id}`)];
}

/**
 * Why the agent was woken, as the new turn of its session tells it (fresh or resumed): the reason,
 * the issue (with its description on an assignment), and the text and author of the comments that
 * woke it. The format is documented in docs/runtimes-cli.md ("What the agent is told").
 */
export function wakeSection(w: WakeContext, d: WakeDetails | null | undefined): string {
  const lines = [`## Why you were woken`, `Reason: ${why(w, d)} (source ${w.source}${w.triggerDetail ? `, ${w.triggerDetail}` : ''})`];
  const issue = d?.issue;
  if (issue) {
    lines.push(`Issue: ${issue.identifier} "${issue.title}" (${issue.status}; id ${issue.id})`);
    if (w.source === 'assignment' && issue.description)
      lines.push('Description:', ...quote(issue.description, `GET /api/issues/${issue.id}`));
  } else if (w.issueId) lines.push(`Issue: ${w.issueId}`);
  const comments = d?.comments ?? [];
  const shown = comments.slice(-WAKE_COMMENT_LIMIT);
  if (comments.length > shown.length)
    lines.push(`(${comments.length - shown.length} earlier comments of this wake: GET /api/issues/${shown[0].issueId}/comments)`);
  for (const c of shown) lines.push(...comment(c));
  if (!shown.length && w.commentId) lines.push(`Comment: ${w.commentId}`);
  const payload = Object.keys(w.payload ?? {}).length ? JSON.stringify(w.payload) : null;
  if (payload) lines.push(`Payload: ${payload.length > WAKE_TEXT_LIMIT ? `${payload.slice(0, WAKE_TEXT_LIMIT)}… [cut]` : payload}`);
  return lines.join('\n');
}
