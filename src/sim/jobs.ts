/**
 * Accepted jobs and how they move through their states. A job's whole future (how long it
 * waits, whether it fails) is decided when it is accepted, so a status call is O(1) and a
 * given seed always gives the same outcomes in the same order.
 */
import { randomUUID } from 'node:crypto';
import { simKind, type SimJobType as JobType } from './kinds/index.js';
import type { ResolvedOptions } from './options.js';
import { mulberry32, type Random } from './prng.js';
import type { Timers } from './timers.js';

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

  accept(type: JobType, fingerprint: string, priceUsd: number): SimJob {
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
