import { Injectable } from '@nestjs/common';

/**
 * The budget clock: which UTC month is "current", when rolling windows end, when a month starts.
 * Real time unless a test freezes it with `set()` (or the process starts with SERVICE_TEST_NOW).
 */
@Injectable()
export class Clock {
  private fixed: Date | null = null;

  constructor() {
    const env = process.env.SERVICE_TEST_NOW;
    if (env && !Number.isNaN(Date.parse(env))) this.fixed = new Date(env);
  }

  now(): Date {
    return this.fixed ? new Date(this.fixed.getTime()) : new Date();
  }

  /** Freezes the clock at an instant; `null` returns to real time. */
  set(at: Date | string | null): void {
    this.fixed = at === null ? null : new Date(at);
  }
}
