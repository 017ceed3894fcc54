/**
 * Fixed-window rate limits per endpoint class, as the service counts them: one counter per
 * window of `windowMs` (a minute at the service) and one per UTC day. A refused request is
 * not counted, so a client that waits out Retry-After gets its full allowance back.
 */
import type { SimJobType } from './kinds/index.js';
import type { Clock } from '../clock.js';

/** Endpoint classes the service counts apart: each kind's submits, every price call, every status call. */
export type LimitedClass = `submit:${SimJobType}` | 'price' | 'status';

export interface ClassRule {
  perWindow: number;
  perDay?: number | undefined;
}

export type RateRules = Partial<Record<LimitedClass, ClassRule>>;

export interface RateDecision {
  allowed: boolean;
  headers: Record<string, string>;
  /** Which counter refused the request. */
  type?: 'minute' | 'daily';
}

interface Counter {
  window: number;
  windowCount: number;
  day: number;
  dayCount: number;
}

const DAY_MS = 86_400_000;

export class RateLimiter {
  private readonly counters = new Map<LimitedClass, Counter>();

  constructor(
    private readonly rules: RateRules,
    private readonly windowMs: number,
    private readonly clock: Clock,
  ) {}

  /** Counts one request of `cls` if the limits allow it; the headers go on the answer either way. */
  check(cls: LimitedClass): RateDecision {
    const now = this.clock.nowMs();
    const rule = this.rules[cls];
    if (!rule) return { allowed: true, headers: {} };
    const window = Math.floor(now / this.windowMs);
    const day = Math.floor(now / DAY_MS);
    let counter = this.counters.get(cls);
    if (!counter) {
      counter = { window, windowCount: 0, day, dayCount: 0 };
      this.counters.set(cls, counter);
    }
    if (counter.window !== window) {
      counter.window = window;
      counter.windowCount = 0;
    }
    if (counter.day !== day) {
      counter.day = day;
      counter.dayCount = 0;
    }
    const dailyFull = rule.perDay !== undefined && counter.dayCount >= rule.perDay;
    const windowFull = counter.windowCount >= rule.perWindow;
    if (!dailyFull && !windowFull) {
      counter.windowCount++;
      counter.dayCount++;
    }
    const headers: Record<string, string> = {
      'X-RateLimit-Limit': String(rule.perWindow),
      'X-RateLimit-Remaining': String(Math.max(0, rule.perWindow - counter.windowCount)),
    };
    if (rule.perDay !== undefined) {
      headers['X-RateLimit-Daily-Limit'] = String(rule.perDay);
      headers['X-RateLimit-Daily-Remaining'] = String(Math.max(0, rule.perDay - counter.dayCount));
    }
    if (!dailyFull && !windowFull) return { allowed: true, headers };
    // The daily cap wins when both are full: waiting out the window would not help.
    const resetAt = dailyFull ? (day + 1) * DAY_MS : (window + 1) * this.windowMs;
    headers['Retry-After'] = String(Math.max(1, Math.ceil((resetAt - now) / 1000)));
    headers['X-RateLimit-Type'] = dailyFull ? 'daily' : 'minute';
    return { allowed: false, headers, type: dailyFull ? 'daily' : 'minute' };
  }
}
