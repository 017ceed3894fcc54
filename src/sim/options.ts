/** The simulator's options and their defaults. */
import type { SimJobType as JobType } from './kinds/index.js';
import type { PricingMode } from './kinds/kind.js';
import { rulesFor, type RateRules } from './rate-limit.js';
import { systemClock, type Clock } from '../clock.js';

const DEFAULTS = {
  /** 0 = a free port; the host is always 127.0.0.1. */
  port: 0,
  /** The only Bearer token accepted. */
  token: 'sim-token',
  /** 'unlimited': no rate limits. */
  plan: 'unlimited' as 'basic' | 'premium' | 'unlimited',
  /** The "minute" of the rate limits, scaled down by tests and benchmarks. */
  rateWindowMs: 60_000,
  /** Added to every API answer. */
  latencyMs: 0,
  /** Fault spec, see faults.ts; empty: none. */
  faults: '',
  seed: 1,
  /** Share of accepted jobs that end in status 'error'. */
  jobErrorRate: 0,
  /** Keep, per accepted job, the sha256 of each field as sent (stats.sent): for tests of what a job was given. */
  recordSent: false,
  /** Whether those errors are retryable (and refunded). */
  errorRetryable: true,
  resultUrlTtlMs: 60_000,
  balanceUsd: 1000,
  pricing: 'linear' as PricingMode,
  /** Filler models added to the catalogue so it spans pages. */
  extraModels: 30,
  /** Delay of the 'slow' fault. */
  slowMs: 3000,
  /** Wait before the first retry of a webhook delivery; each next one doubles. */
  webhookRetryMs: 500,
  webhookRetryMaxMs: 30_000,
  /** Attempts per delivery, the first included: about a minute at the default waits. */
  webhookAttempts: 8,
  /** What every reading of the time goes through: a test sets the hour (the daily reset is 00:00 UTC). */
  clock: systemClock as Clock,
};

export type SimOptions = Partial<typeof DEFAULTS> & {
  /** Per-class limits that replace the plan's. */
  rateLimits?: RateRules;
  /** Time in 'pending' and in 'processing', per type; types left out keep their kind's `pace`. */
  pendingMs?: Partial<Record<JobType, number>>;
  processingMs?: Partial<Record<JobType, number>>;
  /** Where webhook deliveries go, e.g. http://127.0.0.1:8787 (see webhooks.ts); default none. */
  webhookTarget?: string | undefined;
};

export type ResolvedOptions = typeof DEFAULTS & Omit<SimOptions, keyof typeof DEFAULTS> & { rateRules: RateRules };

const NON_NEGATIVE = [
  'latencyMs', 'resultUrlTtlMs', 'extraModels', 'slowMs', 'webhookRetryMs', 'webhookRetryMaxMs', 'webhookAttempts',
] as const;

/** Fills in defaults and rejects values that would make the simulator misbehave. */
export function resolveOptions(options: SimOptions = {}): ResolvedOptions {
  const given = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  const rateRules = rulesFor(options.plan ?? DEFAULTS.plan, options.rateLimits);
  const resolved: ResolvedOptions = { ...DEFAULTS, ...given, rateRules };
  const { jobErrorRate, rateWindowMs } = resolved;
  const refuse = (name: string, expected: string, got: number): Error =>
    new Error(`simulator option ${name}: expected ${expected}, got ${got}`);
  if (!(jobErrorRate >= 0 && jobErrorRate <= 1)) throw refuse('jobErrorRate', '0–1', jobErrorRate);
  if (!(rateWindowMs > 0)) throw refuse('rateWindowMs', '> 0', rateWindowMs);
  for (const name of NON_NEGATIVE) {
    if (!Number.isFinite(resolved[name]) || resolved[name] < 0) throw refuse(name, 'a number ≥ 0', resolved[name]);
  }
  resolved.webhookAttempts = Math.max(1, Math.floor(resolved.webhookAttempts));
  return resolved;
}
