/**
 * What the simulator saw, for tests and benchmarks: every accepted job, call counters, 429s
 * and injected faults. Updating is O(1) per request; the derived views are computed on demand.
 */
import type { JobBook, SimJob } from './jobs.js';

type AcceptedJob = Pick<SimJob, 'requestId' | 'type' | 'fingerprint'> & { at: number };

export type CallKind = 'models' | 'balance' | 'price' | 'status' | 'submit' | 'download';

export function createStats(jobs: JobBook) {
  return {
    accepted: [] as AcceptedJob[],
    calls: { models: 0, balance: 0, price: 0, status: 0, submit: 0, download: 0 } satisfies Record<CallKind, number>,
    /** 429s by endpoint class. */
    rateLimited: {} as Record<string, number>,
    faults: {} as Record<string, number>,
    webhooks: {
      /** Events delivered or still being tried (one per job start, one per job end). */
      events: 0,
      /** POSTs made: first attempts, retries, duplicates, replays and forgeries. */
      attempts: 0,
      /** Attempts answered 2xx (duplicates and replays not counted). */
      delivered: 0,
      gaveUp: 0,
      /** Answers by HTTP status; `none` for no answer (nobody listening, reset, timeout). */
      answers: {} as Record<string, number>,
      faults: {} as Record<string, number>,
    },
    /** Fingerprints accepted more than once, except resubmits of jobs that failed retryably and were refunded. */
    duplicates: () => jobs.duplicates(),
    jobsByStatus: () => jobs.countByStatus(),
  };
}

export type SimStats = ReturnType<typeof createStats>;
export type WebhookStats = SimStats['webhooks'];

/**
 * The stats as a JSON document, for GET /__sim/stats: versioned and snake_case like every
 * document mediabatch writes (docs/schemas/sim-stats.schema.json).
 */
export function statsToJson(stats: SimStats, balanceUsd: number): Record<string, unknown> {
  const { events, attempts, delivered, gaveUp, answers, faults } = stats.webhooks;
  return {
    schema_version: 1,
    accepted: stats.accepted.map(({ requestId, ...job }) => ({ request_id: requestId, ...job })),
    calls: stats.calls,
    rate_limited: stats.rateLimited,
    faults: stats.faults,
    webhooks: { events, attempts, delivered, gave_up: gaveUp, answers, faults },
    duplicates: stats.duplicates().map((dup) => ({ fingerprint: dup.fingerprint, request_ids: dup.requestIds })),
    jobs_by_status: stats.jobsByStatus(),
    balance: balanceUsd,
  };
}
