/**
 * Accepted jobs and how they move through their states. A job's whole future (how long it
 * waits, whether it fails) is decided when it is accepted, so a status call is O(1) and a
 * given seed always gives the same outcomes in the same order.
 */
import { randomUUID } from 'node:crypto';
import type { SimJobType as JobType } from './kinds/index.js';
import type { Random } from './prng.js';
import type { Clock } from '../clock.js';

export interface JobError {
  error_code: 'WORKER_TIMEOUT' | 'WORKER_ERROR' | 'PROCESSING_ERROR';
  error_message: string;
  error_reason: string;
  retryable: boolean;
  refunded: boolean;
}

export interface SimJob {
  requestId: string;
  type: JobType;
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

export interface JobTiming {
  pendingMs: Record<JobType, number>;
  processingMs: Record<JobType, number>;
  jobErrorRate: number;
  errorRetryable: boolean;
  clock: Clock;
}

const ERRORS: readonly Omit<JobError, 'retryable' | 'refunded'>[] = [
  { error_code: 'WORKER_TIMEOUT', error_message: 'The worker did not finish in time.', error_reason: 'timeout' },
  { error_code: 'WORKER_ERROR', error_message: 'The worker failed while generating.', error_reason: 'worker_crashed' },
  { error_code: 'PROCESSING_ERROR', error_message: 'The output could not be processed.', error_reason: 'postprocessing_failed' },
];

export class JobBook {
  readonly jobs = new Map<string, SimJob>();
  readonly byFingerprint = new Map<string, SimJob[]>();
  private readonly refundTimers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly timing: JobTiming,
    private readonly random: Random,
    private readonly refund: (usd: number) => void,
  ) {}

  accept(type: JobType, fingerprint: string, priceUsd: number): SimJob {
    const now = this.timing.clock.nowMs();
    const fails = this.random() < this.timing.jobErrorRate;
    const errorDraw = this.random();
    const job: SimJob = {
      requestId: randomUUID(),
      type,
      fingerprint,
      acceptedAt: now,
      priceUsd,
      index: this.jobs.size,
      pendingMs: this.timing.pendingMs[type],
      processingMs: this.timing.processingMs[type],
    };
    if (fails) {
      const base = ERRORS[Math.floor(errorDraw * ERRORS.length)] ?? ERRORS[0]!;
      const retryable = this.timing.errorRetryable;
      job.error = { ...base, retryable, refunded: retryable };
      if (retryable) this.scheduleRefund(job);
    }
    this.jobs.set(job.requestId, job);
    const same = this.byFingerprint.get(fingerprint);
    if (same) same.push(job);
    else this.byFingerprint.set(fingerprint, [job]);
    return job;
  }

  // The money comes back when the job fails, not when someone asks about it.
  private scheduleRefund(job: SimJob): void {
    const timer = setTimeout(() => {
      this.refundTimers.delete(timer);
      this.refund(job.priceUsd);
    }, job.pendingMs + job.processingMs);
    timer.unref();
    this.refundTimers.add(timer);
  }

  static endsAt(job: SimJob): number {
    return job.acceptedAt + job.pendingMs + job.processingMs;
  }

  static statusAt(job: SimJob, now: number): { status: JobStatus; progress: number } {
    const elapsed = now - job.acceptedAt;
    if (elapsed < job.pendingMs) return { status: 'pending', progress: 0 };
    if (elapsed < job.pendingMs + job.processingMs) {
      const share = job.processingMs > 0 ? (elapsed - job.pendingMs) / job.processingMs : 1;
      return { status: 'processing', progress: Math.min(99, Math.floor(share * 100)) };
    }
    return { status: job.error ? 'error' : 'done', progress: 100 };
  }

  countByStatus(): Record<JobStatus, number> {
    const now = this.timing.clock.nowMs();
    const counts: Record<JobStatus, number> = { pending: 0, processing: 0, done: 0, error: 0 };
    for (const job of this.jobs.values()) counts[JobBook.statusAt(job, now).status]++;
    return counts;
  }

  /**
   * Fingerprints accepted more than once. A re-acceptance is excused when every earlier
   * acceptance of it had already ended in a retryable, refunded error: resubmitting those is right.
   */
  duplicates(): { fingerprint: string; requestIds: string[] }[] {
    const out: { fingerprint: string; requestIds: string[] }[] = [];
    for (const [fingerprint, jobs] of this.byFingerprint) {
      if (jobs.length < 2) continue;
      const excused = jobs.slice(1).every((job, i) =>
        jobs.slice(0, i + 1).every((earlier) => earlier.error?.refunded === true && earlier.error.retryable && JobBook.endsAt(earlier) <= job.acceptedAt));
      if (!excused) out.push({ fingerprint, requestIds: jobs.map((j) => j.requestId) });
    }
    return out;
  }

  close(): void {
    for (const timer of this.refundTimers) clearTimeout(timer);
    this.refundTimers.clear();
  }
}
