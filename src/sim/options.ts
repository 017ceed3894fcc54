/** The simulator's options, their defaults, and the rate rules a plan implies. */
import { perKind, type SimJobType as JobType } from './kinds/index.js';
import { PLANS } from './plans.js';
import type { PricingMode } from './pricing.js';
import { systemClock, type Clock } from '../clock.js';
import type { LimitedClass, RateRules } from './rate-limit.js';

export interface SimOptions {
  /** 0 = a free port; the host is always 127.0.0.1. */
  port?: number;
  /** The only Bearer token accepted. Default 'sim-token'. */
  token?: string;
  /** Default 'unlimited' (no rate limits). */
  plan?: 'basic' | 'premium' | 'unlimited';
  /** The "minute" of the rate limits, scaled down by tests and benchmarks. Default 60000. */
  rateWindowMs?: number;
  /** Per-class limits that replace the plan's. */
  rateLimits?: Partial<Record<LimitedClass, { perWindow: number; perDay?: number }>>;
  /** Added to every API answer. Default 0. */
  latencyMs?: number;
  /** Fault spec, see faults.ts. Default none. */
  faults?: string;
  /** Seed of the fault and job-outcome generators. Default 1. */
  seed?: number;
  /** Time in 'pending', per type; types left out keep their default (`pace` in the kind's file). */
  pendingMs?: Partial<Record<JobType, number>>;
  /** Time in 'processing', per type; types left out keep their default (`pace` in the kind's file). */
  processingMs?: Partial<Record<JobType, number>>;
  /** Share of accepted jobs that end in status 'error'. Default 0. */
  jobErrorRate?: number;
  /** Whether those errors are retryable (and refunded). Default true. */
  errorRetryable?: boolean;
  /** Lifetime of a result URL. Default 60000. */
  resultUrlTtlMs?: number;
  /** Starting balance. Default 1000. */
  balanceUsd?: number;
  /** Price law. Default 'linear'. */
  pricing?: PricingMode;
  /** Filler models added to the catalogue so it spans pages. Default 30. */
  extraModels?: number;
  /** Delay of the 'slow' fault. Default 3000. */
  slowMs?: number;
  /**
   * Where webhook deliveries go, e.g. http://127.0.0.1:8787: the webhook URL's path on this
   * origin (the simulator cannot reach the public address a real URL names). Default none:
   * every delivery attempt fails and is retried, as when no receiver listens.
   */
  webhookTarget?: string | undefined;
  /** Wait before the first retry of a delivery; each next one doubles. Default 500. */
  webhookRetryMs?: number;
  /** The longest wait between two attempts. Default 30000. */
  webhookRetryMaxMs?: number;
  /** Attempts per delivery, the first included. Default 8 (about a minute at the default waits). */
  webhookAttempts?: number;
  /** What every reading of the time goes through: a test sets the hour (the daily reset is 00:00 UTC). Default the system's. */
  clock?: Clock;
}

export type ResolvedOptions = Required<Omit<SimOptions, 'rateLimits' | 'faults' | 'pendingMs' | 'processingMs' | 'webhookTarget'>> & {
  faults: string;
  webhookTarget: string | undefined;
  rateRules: RateRules;
  pendingMs: Record<JobType, number>;
  processingMs: Record<JobType, number>;
};

function rulesFor(options: SimOptions): RateRules {
  const rules: RateRules = {};
  const plan = options.plan ?? 'unlimited';
  if (plan !== 'unlimited') {
    for (const [cls, limit] of Object.entries(PLANS[plan]) as [LimitedClass, { perMinute: number; perDay?: number | undefined }][]) {
      rules[cls] = { perWindow: limit.perMinute, perDay: limit.perDay };
    }
  }
  for (const [cls, rule] of Object.entries(options.rateLimits ?? {}) as [LimitedClass, { perWindow: number; perDay?: number }][]) {
    rules[cls] = { perWindow: rule.perWindow, perDay: rule.perDay };
  }
  return rules;
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new Error(`simulator option ${name}: expected a number ≥ 0, got ${value}`);
  return value;
}

/** Fills in defaults and rejects values that would make the simulator misbehave. */
export function resolveOptions(options: SimOptions = {}): ResolvedOptions {
  const jobErrorRate = options.jobErrorRate ?? 0;
  if (!(jobErrorRate >= 0 && jobErrorRate <= 1)) throw new Error(`simulator option jobErrorRate: expected 0–1, got ${jobErrorRate}`);
  const rateWindowMs = options.rateWindowMs ?? 60_000;
  if (!(rateWindowMs > 0)) throw new Error(`simulator option rateWindowMs: expected > 0, got ${rateWindowMs}`);
  return {
    port: options.port ?? 0,
    token: options.token ?? 'sim-token',
    plan: options.plan ?? 'unlimited',
    rateWindowMs,
    rateRules: rulesFor(options),
    latencyMs: nonNegative('latencyMs', options.latencyMs ?? 0),
    faults: options.faults ?? '',
    seed: options.seed ?? 1,
    pendingMs: { ...perKind((kind) => kind.pace.pendingMs), ...options.pendingMs },
    processingMs: { ...perKind((kind) => kind.pace.processingMs), ...options.processingMs },
    jobErrorRate,
    errorRetryable: options.errorRetryable ?? true,
    resultUrlTtlMs: nonNegative('resultUrlTtlMs', options.resultUrlTtlMs ?? 60_000),
    balanceUsd: options.balanceUsd ?? 1000,
    pricing: options.pricing ?? 'linear',
    extraModels: nonNegative('extraModels', options.extraModels ?? 30),
    slowMs: nonNegative('slowMs', options.slowMs ?? 3000),
    webhookTarget: options.webhookTarget,
    webhookRetryMs: nonNegative('webhookRetryMs', options.webhookRetryMs ?? 500),
    webhookRetryMaxMs: nonNegative('webhookRetryMaxMs', options.webhookRetryMaxMs ?? 30_000),
    webhookAttempts: Math.max(1, Math.floor(nonNegative('webhookAttempts', options.webhookAttempts ?? 8))),
    clock: options.clock ?? systemClock,
  };
}
