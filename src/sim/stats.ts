/**
 * What the simulator saw, for tests and benchmarks: every accepted job, call counters, 429s
 * and injected faults. Updating is O(1) per request; the derived views are computed on demand.
 */
import type { SimJobType as JobType } from './kinds/index.js';
import type { JobBook, JobStatus } from './jobs.js';

export interface AcceptedJob {
  requestId: string;
  type: JobType;
  /** sha256 of the job's canonical content (type, parameters, text or prompt and image digests). */
  fingerprint: string;
  /** Epoch ms of acceptance. */
  at: number;
}

/** The webhook deliveries the simulator made (sim/webhooks.ts). */
export interface WebhookStats {
  /** Events delivered or still being tried (one per job start, one per job end). */
  events: number;
  /** POSTs made: first attempts, retries, duplicates, replays and forgeries. */
  attempts: number;
  /** Attempts answered 2xx (duplicates and replays not counted). */
  delivered: number;
  /** Events whose every attempt failed. */
  gaveUp: number;
  /** Answers by HTTP status; `none` for no answer (nobody listening, reset, timeout). */
  answers: Record<string, number>;
  /** Webhook faults injected, by kind. */
  faults: Record<string, number>;
}

export type CallKind = 'models' | 'balance' | 'price' | 'status' | 'submit' | 'download';

export interface SimStats {
  accepted: AcceptedJob[];
  calls: Record<CallKind, number>;
  /** 429s answered, by endpoint class. */
  rateLimited: Record<string, number>;
  /** Faults injected, by kind. */
  faults: Record<string, number>;
  webhooks: WebhookStats;
  /** Fingerprints accepted more than once, except resubmits of jobs that failed retryably and were refunded. */
  duplicates(): { fingerprint: string; requestIds: string[] }[];
  jobsByStatus(): Record<JobStatus, number>;
}

export function createStats(jobs: JobBook): SimStats {
  return {
    accepted: [],
    calls: { models: 0, balance: 0, price: 0, status: 0, submit: 0, download: 0 },
    rateLimited: {},
    faults: {},
    webhooks: { events: 0, attempts: 0, delivered: 0, gaveUp: 0, answers: {}, faults: {} },
    duplicates: () => jobs.duplicates(),
    jobsByStatus: () => jobs.countByStatus(),
  };
}

/**
 * The stats as a JSON document, for GET /__sim/stats: versioned and snake_case like every
 * document mediabatch writes (docs/schemas/sim-stats.schema.json).
 */
export function statsToJson(stats: SimStats, balanceUsd: number): Record<string, unknown> {
  return {
    schema_version: 1,
    accepted: stats.accepted.map((job) => ({ request_id: job.requestId, type: job.type, fingerprint: job.fingerprint, at: job.at })),
    calls: stats.calls,
    rate_limited: stats.rateLimited,
    faults: stats.faults,
    webhooks: { events: stats.webhooks.events, attempts: stats.webhooks.attempts, delivered: stats.webhooks.delivered, gave_up: stats.webhooks.gaveUp, answers: stats.webhooks.answers, faults: stats.webhooks.faults },
    duplicates: stats.duplicates().map((dup) => ({ fingerprint: dup.fingerprint, request_ids: dup.requestIds })),
    jobs_by_status: stats.jobsByStatus(),
    balance: balanceUsd,
  };
}
