/** Event types of the live stream (the board UI refetches what an event touches). */
export type LiveEventType =
  | 'heartbeat.run.queued'
  | 'heartbeat.run.status'
  | 'heartbeat.run.event'
  | 'heartbeat.run.log'
  | 'agent.status'
  | 'activity.logged'
  | 'plugin.worker.crashed'
  | 'plugin.worker.restarted';

/** One message of a company's stream, as WebSocket and SSE clients receive it. */
export interface LiveEvent {
  /** increases per company in commit order; resume with `?after=` or `Last-Event-ID` */
  id: number;
  companyId: string;
  type: string;
  createdAt: string;
  payload: Record<string, unknown>;
}

export interface PendingLiveEvent {
  companyId: string;
  type: LiveEventType;
  payload: Record<string, unknown>;
  createdAt: Date;
}
