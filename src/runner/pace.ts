import { TokenBucket } from 'limiter';
import { setTimeout as delay } from 'node:timers/promises';
import type { RateLimitInfo } from '../api/types.js';
import { pacedClasses, planLimits, unlimitedPlan, type PacedClass, type PlanLimits } from '../jobs/plans.js';
import { systemClock, type Clock } from '../clock.js';

export type { PacedClass };

export interface ClassPace {
  perWindow: number;
  windowMs: number;
}

export interface PaceOptions {
  /** Share of the allowed rate to aim at: a little under 1 so clock skew never draws a 429. */
  headroom?: number;
  onPause?: (cls: PacedClass, untilMs: number, reason: string) => void;
  /** The first request of a class whose pause was told goes again. */
  onResume?: (cls: PacedClass) => void;
  /** What pauses are measured by (a 429's Retry-After, a daily reset). Default the system's. */
  clock?: Clock | undefined;
}

interface ClassState {
  /** undefined: no client-side limit for this class (it still pauses on a 429). */
  bucket: TokenBucket | undefined;
  pausedUntilMs: number;
  spacingMs: number;
  /** A pause was told (onPause) and its end not yet. */
  told: boolean;
}

/**
 * Paces requests per endpoint class the way the service counts them. A token bucket of size
 * one spaces requests evenly (the service counts fixed windows, so a burst at a window's edge
 * would be counted twice); a 429 or an exhausted `X-RateLimit-Remaining` pauses the whole
 * class, so every worker waits rather than each one drawing its own 429.
 */
export class Pace {
  readonly #classes = new Map<PacedClass, ClassState>();
  readonly #onPause: PaceOptions['onPause'];
  readonly #onResume: PaceOptions['onResume'];
  readonly #clock: Clock;

  constructor(limits: Partial<Record<PacedClass, ClassPace>>, options: PaceOptions = {}) {
    const headroom = options.headroom ?? 0.97;
    this.#onPause = options.onPause;
    this.#onResume = options.onResume;
    this.#clock = options.clock ?? systemClock;
    for (const cls of pacedClasses()) {
      const limit = limits[cls];
      const perWindow = limit === undefined ? 0 : limit.perWindow * headroom;
      const bucket =
        limit === undefined ? undefined : new TokenBucket({ bucketSize: 1, tokensPerInterval: perWindow, interval: limit.windowMs });
      // limiter starts a bucket empty; the first request of a run need not wait a whole spacing
      // (12 s on Basic). A window still full from an earlier run answers 429 with Retry-After.
      if (bucket !== undefined) bucket.content = 1;
      this.#classes.set(cls, {
        bucket,
        pausedUntilMs: 0,
        told: false,
        spacingMs: limit === undefined ? 0 : limit.windowMs / perWindow,
      });
    }
  }

  /** Waits until one request of `cls` may be sent; rejects with the signal's reason on abort. */
  async take(cls: PacedClass, signal?: AbortSignal): Promise<void> {
    const state = this.#state(cls);
    await this.#pauseOver(state, signal);
    if (state.bucket !== undefined) await abortable(state.bucket.removeTokens(1), signal);
    // A pause may have begun while this request waited for its token: it waits that out too,
    // keeping its token (taking another would add a whole spacing to every pause).
    await this.#pauseOver(state, signal);
    if (state.told) {
      state.told = false;
      this.#onResume?.(cls);
    }
  }

  async #pauseOver(state: ClassState, signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const waitMs = state.pausedUntilMs - this.#clock.nowMs();
      if (waitMs <= 0) return;
      await sleep(waitMs, signal);
    }
  }

  /** Stops every request of `cls` until `untilMs` (a 429's Retry-After, a daily reset). */
  pause(cls: PacedClass, untilMs: number, reason: string): void {
    const state = this.#state(cls);
    if (untilMs <= state.pausedUntilMs) return;
    // Every worker in flight draws its own 429 for the same window: say it once.
    const news = untilMs - Math.max(state.pausedUntilMs, this.#clock.nowMs()) > 1000;
    state.pausedUntilMs = untilMs;
    if (!news) return;
    state.told = true;
    this.#onPause?.(cls, untilMs, reason);
  }

  /**
   * A 429: the whole class waits for its Retry-After, or for 60 s (a minute window) when the
   * service gave none; a daily limit's Retry-After runs to the 00:00 UTC reset.
   */
  rateLimited(cls: PacedClass, answer: { retryAfterMs?: number | undefined; limitType?: string | undefined }): void {
    // Each reason reads after "paused by", as the terminal and the log show it.
    const reason = answer.limitType === 'daily' ? 'the daily limit' : 'a rate limit (HTTP 429)';
    this.pause(cls, this.#clock.nowMs() + (answer.retryAfterMs ?? 60_000), reason);
  }

  /** Adapts to the headers of a successful answer: nothing left in the window means wait. */
  observe(cls: PacedClass, info: RateLimitInfo): void {
    if (info.remaining === 0) {
      // The window's end is not announced; one spacing (or a second) lets it roll over
      // without a storm of 429s, and a 429 that still comes carries the exact Retry-After.
      const state = this.#state(cls);
      this.pause(cls, this.#clock.nowMs() + Math.max(1000, state.spacingMs), 'the rate-limit window (X-RateLimit-Remaining: 0)');
    }
  }

  pausedUntil(cls: PacedClass): number {
    return this.#state(cls).pausedUntilMs;
  }

  #state(cls: PacedClass): ClassState {
    const state = this.#classes.get(cls);
    if (state === undefined) throw new Error(`unknown endpoint class ${cls}`);
    return state;
  }
}

/** The pace of a published plan; `windowMs` may be scaled down for tests and benchmarks. */
export function planPace(plan: PlanLimits, windowMs = 60_000): Partial<Record<PacedClass, ClassPace>> {
  const limits = Object.entries(plan);
  return Object.fromEntries(limits.map(([cls, limit]) => [cls, { perWindow: limit.perMinute, windowMs }]));
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).catch(() => Promise.reject(signal?.reason));
}

async function abortable<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (signal === undefined) return promise;
  signal.throwIfAborted();
  let onAbort = (): void => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** The account plan to pace for; `unlimited` keeps no client-side pace (429s are still obeyed). */
export type PlanChoice = 'basic' | 'premium' | 'unlimited';

/** The limits a plan keeps (the cost report and the progress line time a batch by them). */
export function limitsOf(plan: PlanChoice): PlanLimits {
  return plan === 'unlimited' ? unlimitedPlan() : planLimits(plan);
}

export function paceFor(plan: PlanChoice, options: PaceOptions = {}): Pace {
  return new Pace(plan === 'unlimited' ? {} : planPace(limitsOf(plan)), options);
}
