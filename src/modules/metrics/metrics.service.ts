import { Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Pool } from 'pg';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { Db } from '../../database/db.service';
import type { RunFinishedEvent, RunStartedEvent } from '../heartbeat/run-lifecycle-events.port';
import { MetricsRepository } from './metrics.repository';

const SECONDS = (from: Date, to: Date) => Math.max(0, (to.getTime() - from.getTime()) / 1000);
const RUN_BUCKETS = [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

/**
 * The Prometheus registry of this instance (prom-client). Request, run-start and run-duration
 * histograms count what this instance saw; run, wakeup and budget-incident gauges are read from
 * the database at scrape time, so every instance reports the same totals.
 */
@Injectable()
export class MetricsService implements OnModuleInit {
  readonly registry = new Registry();
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly httpTotal: Counter<'method' | 'route' | 'status'>;
  private readonly wakeToStart: Histogram<'adapter_type'>;
  private readonly runDuration: Histogram<'status'>;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly repo: MetricsRepository,
    private readonly db: Db,
  ) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry }); // includes nodejs_eventloop_lag_seconds
    this.httpTotal = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by route template and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.wakeToStart = new Histogram({
      name: 'heartbeat_wake_to_start_seconds',
      help: 'Time from a run being queued (its wake) to its start on this instance',
      labelNames: ['adapter_type'],
      buckets: RUN_BUCKETS,
      registers,
    });
    this.runDuration = new Histogram({
      name: 'heartbeat_run_duration_seconds',
      help: 'Duration of runs that ended, by final status',
      labelNames: ['status'],
      buckets: RUN_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'heartbeat_runs',
      help: 'Runs by status (whole database)',
      labelNames: ['status'],
      registers,
      async collect() {
        this.reset();
        for (const r of await repo.runsByStatus().catch(() => [])) this.set({ status: r.status }, r.n);
      },
    });
    new Gauge({
      name: 'heartbeat_wakeups',
      help: 'Wakeup requests waiting (queued, deferred) or claimed (whole database)',
      labelNames: ['status'],
      registers,
      async collect() {
        this.reset();
        for (const s of ['queued', 'deferred', 'claimed']) this.set({ status: s }, 0);
        for (const r of await repo.wakeupsByStatus().catch(() => [])) this.set({ status: r.status }, r.n);
      },
    });
    new Gauge({
      name: 'budget_incidents',
      help: 'Budget incidents by kind (soft, hard) and status (open, resolved)',
      labelNames: ['kind', 'status'],
      registers,
      async collect() {
        this.reset();
        for (const r of await repo.budgetIncidents().catch(() => [])) this.set({ kind: r.kind, status: r.status }, r.n);
      },
    });
    const pool = () => (this.db.dataSource.driver as unknown as { master?: Pool }).master;
    new Gauge({
      name: 'db_pool_connections',
      help: 'Database pool connections of this instance: total, idle, in use, and requests waiting for one',
      labelNames: ['state'],
      registers,
      collect() {
        const p = pool();
        const total = p?.totalCount ?? 0;
        const idle = p?.idleCount ?? 0;
        this.set({ state: 'total' }, total);
        this.set({ state: 'idle' }, idle);
        this.set({ state: 'in_use' }, total - idle);
        this.set({ state: 'waiting' }, waitingForConnection(p));
      },
    });
  }

  /** A run this instance claimed: the time from its wake to its start (metrics/run-lifecycle-events.port-impl.ts). */
  runStarted(e: RunStartedEvent): void {
    this.wakeToStart.observe({ adapter_type: e.adapterType }, SECONDS(e.createdAt, e.startedAt));
  }

  /** A run that ended: how long it ran, when it started. */
  runFinished(e: RunFinishedEvent): void {
    if (e.startedAt && e.finishedAt) this.runDuration.observe({ status: e.status }, SECONDS(e.startedAt, e.finishedAt));
  }

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    fastify.addHook('onResponse', (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
      // the route template (`/api/issues/:id`), never the raw path: label values stay few
      const route = req.routeOptions?.url ?? 'unmatched';
      const labels = { method: req.method, route, status: String(reply.statusCode) };
      this.httpTotal.inc(labels);
      this.httpDuration.observe(labels, reply.elapsedTime / 1000);
      done();
    });
  }

  /** Readiness of the database: reachable, no migration running, none pending for this build. */
  async readiness(): Promise<{ reachable: boolean; migrating: boolean; pendingMigrations: boolean }> {
    try {
      const migrating = await this.repo.migrationRunning();
      const pending = await this.db.dataSource.showMigrations();
      return { reachable: true, migrating, pendingMigrations: pending };
    } catch {
      return { reachable: false, migrating: false, pendingMigrations: false };
    }
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * Checkouts waiting for a connection because the pool is exhausted. pg-pool's `waitingCount` is not
 * that: it queues every checkout for a tick while idle clients are there to take it, and those it
 * cannot serve from an idle client get a new connection when the pool is not full. A scrape's own
 * queries (the gauges above) made it read 3 on an idle instance, and an alert on it always fired.
 */
function waitingForConnection(p: Pool | undefined): number {
  if (!p) return 0;
  const max = (p as unknown as { options?: { max?: number } }).options?.max ?? 10;
  return p.totalCount >= max ? Math.max(0, p.waitingCount - p.idleCount) : 0;
}
