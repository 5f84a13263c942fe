import { Injectable } from '@nestjs/common';
import type { WakeContext, WakeDetails } from '../adapters/run.types';

/** Reads the issue and the comments a wake names, in the run's company (the issues module registers one). */
export type WakeDetailsReader = (companyId: string, q: { issueId: string | null; commentIds: string[] }) => Promise<WakeDetails>;

/** The comments a run's wake names: its own and those of the wakes coalesced into it, oldest first. */
export function wakeCommentIds(w: WakeContext): string[] {
  const ids = (w.coalesced ?? []).map((c) => c.payload?.commentId);
  const own = typeof w.payload?.commentId === 'string' ? w.payload.commentId : w.commentId;
  return [...new Set([own, ...ids].filter((x): x is string => typeof x === 'string' && x.length > 0))];
}

/**
 * What a run's wake names (the issue, the comments), read when the run starts so that the agent's
 * new turn says why it was woken. Issues and comments belong to the issues module, which imports
 * the engine: it registers the reader at start-up; without one a run's prompt names ids only.
 */
@Injectable()
export class RunWakeDetails {
  private reader: WakeDetailsReader | null = null;

  register(reader: WakeDetailsReader): void {
    this.reader = reader;
  }

  /** Null when the wake names no issue and no comment, or nobody can read them. */
  async read(companyId: string, w: WakeContext): Promise<WakeDetails | null> {
    const commentIds = wakeCommentIds(w);
    if (!this.reader || (!w.issueId && commentIds.length === 0)) return null;
    return this.reader(companyId, { issueId: w.issueId, commentIds });
  }
}
