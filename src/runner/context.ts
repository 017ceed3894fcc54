import type { JobType } from '../jobs/types.js';
import { setMaxListeners } from 'node:events';
import type { ServiceClient } from '../api/types.js';
import type { MicroUsd } from '../money.js';
import type { Ledger } from '../store/index.js';
import type { Pace } from './pace.js';

/** How often a running job is asked about, per type: from `firstMs`, growing by `factor` to `maxMs`. */
export interface PollSchedule {
  firstMs: number;
  maxMs: number;
  factor: number;
  /** Stop waiting (the job stays `submitted` and the next run collects it). */
  giveUpMs: number;
}

export interface RetryPolicy {
  retries: number;
  minDelayMs: number;
  maxDelayMs: number;
}

export interface RunOptions {
  concurrency: number;
  budgetMicro: MicroUsd | null;
  noWait: boolean;
  resubmitInDoubt: boolean;
  outDir: string;
  poll: Record<JobType, PollSchedule>;
  retry: RetryPolicy;
  /** Results larger than this are refused (API.md: outputs ≤ 100 MB). */
  maxResultBytes: number;
}

export type RunEvent =
  | { kind: 'submitted'; id: string; requestId: string }
  | { kind: 'done'; id: string; path: string; bytes: number }
  | { kind: 'failed'; id: string; reason: string }
  | { kind: 'in_doubt'; id: string; reason: string }
  | { kind: 'not_taken'; id: string; reason: string }
  | { kind: 'skipped'; id: string; reason: string }
  | { kind: 'still_running'; id: string }
  | { kind: 'retry'; what: string; attempt: number; delayMs: number; reason: string }
  | { kind: 'paused'; what: string; untilMs: number; reason: string }
  | { kind: 'warning'; message: string };

/**
 * Submits whose request may have left and whose answer has not come. A stop waits for them (so
 * none becomes in doubt); the CLI reads the count to say what it is waiting for.
 */
export interface InFlight {
  submits: number;
}

/** Everything the execute step needs, built by the CLI (the composition root) and passed down. */
export interface RunContext {
  client: ServiceClient;
  /** Every change resolves once committed; changes asked for together share a commit. */
  ledger: Ledger;
  pace: Pace;
  options: RunOptions;
  /** Aborted by the first Ctrl-C or SIGTERM, or by a fatal error: no new work starts. */
  stop: AbortSignal;
  emit: (event: RunEvent) => void;
  inFlight: InFlight;
}

/** Builds a context from what the composition root owns (a fresh in-flight count unless given). */
export function createRunContext(parts: Omit<RunContext, 'inFlight'> & { inFlight?: InFlight }): RunContext {
  // Submits, pace waits, polls and downloads in flight each listen to the stop signal: more than
  // Node's warning threshold of ten is the normal case here, not a leak.
  setMaxListeners(0, parts.stop);
  return { ...parts, inFlight: parts.inFlight ?? { submits: 0 } };
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 5, minDelayMs: 500, maxDelayMs: 30_000 };

/** API.md: official clients poll audio from ~1–2 s up to ~5–10 s, video from ~5 s up to ~30 s. */
export const SERVICE_POLL: Record<JobType, PollSchedule> = {
  txt2audio: { firstMs: 1500, maxMs: 8000, factor: 1.5, giveUpMs: 10 * 60_000 },
  img2video: { firstMs: 5000, maxMs: 30_000, factor: 1.5, giveUpMs: 15 * 60_000 },
};

/** The simulator finishes jobs in well under a second, so polling it at the service's pace only waits. */
export const SIMULATOR_POLL: Record<JobType, PollSchedule> = {
  txt2audio: { firstMs: 150, maxMs: 1000, factor: 1.5, giveUpMs: 60_000 },
  img2video: { firstMs: 300, maxMs: 2000, factor: 1.5, giveUpMs: 120_000 },
};

/**
 * `run --poll-ms MS`: every type's first poll after MS, backing off ×1.5 up to 6×MS; the give-up
 * time stays the service's. For a local server (a simulator started apart, a test double) whose
 * jobs end in milliseconds: the status pace of the plan still bounds the calls.
 */
export function pollEvery(firstMs: number): Record<JobType, PollSchedule> {
  const schedule = (type: JobType): PollSchedule => ({
    firstMs,
    maxMs: firstMs * 6,
    factor: 1.5,
    giveUpMs: SERVICE_POLL[type].giveUpMs,
  });
  return { txt2audio: schedule('txt2audio'), img2video: schedule('img2video') };
}
