/**
 * Rate limits per endpoint class, as the service counts them: one counter per fixed window of
 * `windowMs` (a minute at the service) and one per UTC day. A refused request is not counted, so
 * a client that waits out Retry-After gets its full allowance back.
 */
import { SIM_KINDS, type SimJobType } from './kinds/index.js';
import type { Clock } from '../clock.js';

/** Endpoint classes the service counts apart: each kind's submits, every price call, every status call. */
export type LimitedClass = `submit:${SimJobType}` | 'price' | 'status';

export type PlanName = 'basic' | 'premium';

/** The class a kind's submits are counted in: its own, or the one whose budget it shares (the Whisper kinds). */
export const submitClass = (kind: { type: SimJobType; paceClass?: string }): LimitedClass =>
  `submit:${(kind.paceClass ?? kind.type) as SimJobType}`;

/** A class's limit on a published plan. (The client paces itself by the same figures, kept in src/jobs.) */
export interface ClassLimit {
  perMinute: number;
  /** Daily cap, reset at 00:00 UTC; undefined when the plan states none. */
  perDay?: number | undefined;
}

export type RateRules = Partial<Record<LimitedClass, { perWindow: number; perDay?: number | undefined }>>;

const SHARED: Record<PlanName, Record<'price' | 'status', ClassLimit>> = {
  basic: { price: { perMinute: 50, perDay: 200 }, status: { perMinute: 50, perDay: 200 } },
  // Premium states 300/min for generation and nothing for price and status calls; the service's docs say
  // to assume those are limited all the same, so they get the generation figure.
  premium: { price: { perMinute: 300 }, status: { perMinute: 300 } },
};

/** A plan's limits (each kind's submits in its file in kinds/), then any the options give instead. */
export function rulesFor(plan: PlanName | 'unlimited', overrides: RateRules = {}): RateRules {
  if (plan === 'unlimited') return { ...overrides };
  const submits = SIM_KINDS.map((kind) => [submitClass(kind), kind.plans[plan]] as const);
  const limits = [...submits, ...Object.entries(SHARED[plan])];
  const rules = limits.map(([cls, { perMinute, perDay }]) => [cls, { perWindow: perMinute, perDay }]);
  return { ...Object.fromEntries(rules), ...overrides } as RateRules;
}

const DAY_MS = 86_400_000;

export class RateLimiter {
  private readonly counters = new Map<LimitedClass, Record<'window' | 'windowCount' | 'day' | 'dayCount', number>>();

  constructor(
    private readonly rules: RateRules,
    private readonly windowMs: number,
    private readonly clock: Clock,
  ) {}

  /** Counts one request of `cls` if the limits allow it; the headers go on the answer either way. */
  check(cls: LimitedClass): { allowed: boolean; headers: Record<string, string> } {
    const now = this.clock.nowMs();
    const rule = this.rules[cls];
    if (!rule) return { allowed: true, headers: {} };
    const window = Math.floor(now / this.windowMs);
    const day = Math.floor(now / DAY_MS);
    const counter = this.counters.get(cls) ?? { window, windowCount: 0, day, dayCount: 0 };
    this.counters.set(cls, counter);
    if (counter.window !== window) Object.assign(counter, { window, windowCount: 0 });
    if (counter.day !== day) Object.assign(counter, { day, dayCount: 0 });
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
    return { allowed: false, headers };
  }
}
