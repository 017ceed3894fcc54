/**
 * Accepted jobs and how they move through their states. A job's whole future (how long it
 * waits, whether it fails) is decided when it is accepted, so a status call is O(1) and a
 * given seed always gives the same outcomes in the same order. And the stats: what the simulator
 * saw, for tests and benchmarks (O(1) to update per request; the derived views on demand).
 */
import { randomUUID } from 'node:crypto';
import { simKind, type SimJobType as JobType } from './kinds/index.js';
import type { ResolvedOptions } from './options.js';
import { mulberry32, type Random, type Timers } from './timers.js';

export interface SimJob {
  requestId: string;
  type: JobType;
  /** sha256 of the job's canonical content (type, parameters, text or prompt and image digests). */
  fingerprint: string;
  acceptedAt: number;
  priceUsd: number;
  /** Acceptance order; odd jobs report progress as a string, as the service sometimes does. */
  index: number;
  pendingMs: number;
  processingMs: number;
  error?: JobError | undefined;
  /** The submit asked for its text or embedding in the status (`return_result_in_response`). */
  inline?: boolean | undefined;
  /** A transcript asked for with timestamps (`include_ts`): served as JSON segments. */
  timestamped?: boolean | undefined;
}

export type JobStatus = 'pending' | 'processing' | 'done' | 'error';

const ERRORS = [
  { error_code: 'WORKER_TIMEOUT', error_message: 'The worker did not finish in time.', error_reason: 'timeout' },
  { error_code: 'WORKER_ERROR', error_message: 'The worker failed while generating.', error_reason: 'worker_crashed' },
  { error_code: 'PROCESSING_ERROR', error_message: 'The output could not be processed.', error_reason: 'postprocessing_failed' },
] as const;

type JobError = (typeof ERRORS)[number] & { retryable: boolean; refunded: boolean };

export const endsAt = (job: SimJob): number => job.acceptedAt + job.pendingMs + job.processingMs;

export function statusAt(job: SimJob, now: number): { status: JobStatus; progress: number } {
  const elapsed = now - job.acceptedAt;
  if (elapsed < job.pendingMs) return { status: 'pending', progress: 0 };
  if (elapsed < job.pendingMs + job.processingMs) {
    const share = job.processingMs > 0 ? (elapsed - job.pendingMs) / job.processingMs : 1;
    return { status: 'processing', progress: Math.min(99, Math.floor(share * 100)) };
  }
  return { status: job.error ? 'error' : 'done', progress: 100 };
}

export class JobBook {
  readonly jobs = new Map<string, SimJob>();
  private readonly random: Random;

  constructor(
    private readonly options: ResolvedOptions,
    private readonly timers: Timers,
    private readonly refund: (usd: number) => void,
  ) {
    // A separate stream for job outcomes, so adding a fault does not change which jobs fail.
    this.random = mulberry32(options.seed ^ 0x5bd1e995);
  }

  accept(type: JobType, fingerprint: string, priceUsd: number, inline = false, timestamped = false): SimJob {
    const fails = this.random() < this.options.jobErrorRate;
    const errorDraw = this.random();
    const job: SimJob = {
      requestId: randomUUID(),
      type,
      fingerprint,
      acceptedAt: this.options.clock.nowMs(),
      priceUsd,
      index: this.jobs.size,
      pendingMs: this.options.pendingMs?.[type] ?? simKind(type).pace.pendingMs,
      processingMs: this.options.processingMs?.[type] ?? simKind(type).pace.processingMs,
      inline,
      timestamped,
    };
    if (fails) {
      const retryable = this.options.errorRetryable;
      job.error = { ...(ERRORS[Math.floor(errorDraw * ERRORS.length)] ?? ERRORS[0]!), retryable, refunded: retryable };
      // The money comes back when the job fails, not when someone asks about it.
      if (retryable) this.timers.after(job.pendingMs + job.processingMs, () => this.refund(job.priceUsd), true);
    }
    this.jobs.set(job.requestId, job);
    return job;
  }

  countByStatus(): Record<JobStatus, number> {
    const now = this.options.clock.nowMs();
    const counts: Record<JobStatus, number> = { pending: 0, processing: 0, done: 0, error: 0 };
    for (const job of this.jobs.values()) counts[statusAt(job, now).status]++;
    return counts;
  }

  /**
   * Fingerprints accepted more than once. A re-acceptance is excused when every earlier
   * acceptance of it had already ended in a retryable, refunded error: resubmitting those is right.
   */
  duplicates(): { fingerprint: string; requestIds: string[] }[] {
    const groups = new Map<string, SimJob[]>();
    for (const job of this.jobs.values()) groups.set(job.fingerprint, [...(groups.get(job.fingerprint) ?? []), job]);
    const refundedBefore = (earlier: SimJob, job: SimJob): boolean =>
      earlier.error?.refunded === true && earlier.error.retryable && endsAt(earlier) <= job.acceptedAt;
    return [...groups]
      .filter(([, jobs]) => !jobs.every((job, i) => jobs.slice(0, i).every((earlier) => refundedBefore(earlier, job))))
      .map(([fingerprint, jobs]) => ({ fingerprint, requestIds: jobs.map((j) => j.requestId) }));
  }

  /** Another accepted job's request id (or one nobody has), for a forged delivery. */
  otherThan(requestId: string): string {
    for (const id of this.jobs.keys()) if (id !== requestId) return id;
    return randomUUID();
  }
}

type AcceptedJob = Pick<SimJob, 'requestId' | 'type' | 'fingerprint'> & { at: number };

export type CallKind = 'models' | 'balance' | 'price' | 'status' | 'submit' | 'download';

export function createStats(jobs: JobBook) {
  return {
    accepted: [] as AcceptedJob[],
    /** With `recordSent`, by request id: each field's sha256 as sent (a file's bytes, a text's UTF-8). */
    sent: new Map<string, Readonly<Record<string, string>>>(),
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
