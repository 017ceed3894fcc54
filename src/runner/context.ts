import { setMaxListeners } from 'node:events';
import type { ServiceClient } from '../api/types.js';
import { JOB_KINDS, type JobKind, type JobType, type PollSchedule } from '../jobs/index.js';
import type { MicroUsd } from '../money.js';
import type { Ledger } from '../store/index.js';
import type { PacedClass, Pace } from './pace.js';
import type { Clock } from '../clock.js';

export const DEFAULT_RETRY = { retries: 5, minDelayMs: 500, maxDelayMs: 30_000 };
export type RetryPolicy = typeof DEFAULT_RETRY;

/** A run's options that a request may leave out, with the defaults `run()` applies. */
export const RUN_DEFAULTS = {
  /** Submits in flight at once (for an estimate, the duration it tells). */
  concurrency: 8,
  /** Stop after submitting; a later run follows and collects. */
  noWait: false,
  resubmitInDoubt: false,
  retry: DEFAULT_RETRY,
  /** Larger results are left for a later run: the service's are at most 100 MB, plus container overhead. */
  maxResultBytes: 110 * 1024 * 1024,
  /**
   * `run --retries`: how many more passes, within this run, send again the jobs that failed at the
   * service during it, retryable and refunded: an unattended run heals by itself.
   */
  retryFailed: 2,
};

export type RunOptions = typeof RUN_DEFAULTS & { budgetMicro: MicroUsd | null; outDir: string };

/**
 * What a run tells its caller as it happens; the CLI renders them (terminal, --log-file). Every
 * job event but `still_running` is a change of the job's state in the ledger.
 */
export type RunEvent =
  /** Reserved (`submitting`, committed) and about to be sent. */
  | { kind: 'submitting'; id: string }
  /** Taken by the service: its price now counts as spent (the log's `price_usd`). */
  | { kind: 'submitted'; id: string; requestId: string; priceMicro?: MicroUsd | undefined }
  | { kind: 'done'; id: string; path: string; bytes: number }
  /** Every part of a split job done, and joined into `path` (the playlist is written beside it). */
  | { kind: 'joined'; id: string; path: string; parts: number; bytes: number }
  | { kind: 'failed'; id: string; reason: string }
  | { kind: 'in_doubt'; id: string; reason: string }
  | { kind: 'not_taken'; id: string; reason: string }
  | { kind: 'skipped'; id: string; reason: string }
  /** Waits for an input that will not be done by this selection; a run that sends that input again unblocks it. */
  | { kind: 'blocked'; id: string; reason: string }
  /** Its inputs are done, or will be sent: it is pending again. */
  | { kind: 'unblocked'; id: string }
  /** Priced at a bound until its inputs existed, now at its real price, before its reservation. */
  | { kind: 'repriced'; id: string; boundMicro: MicroUsd; priceMicro: MicroUsd }
  /** Left out at once (--partial, over budget): `count` not sent; `skipped` were pending, the rest keep their state. */
  | { kind: 'left_out'; count: number; skipped: number; reason: string }
  /** Retry pass `pass` of `passes` (--retries) sends again `jobs` jobs that failed at the service, retryable and refunded. */
  | { kind: 'retry_pass'; pass: number; passes: number; jobs: number }
  | { kind: 'still_running'; id: string }
  | { kind: 'retry'; what: string; attempt: number; delayMs: number; reason: string }
  /** A whole class of requests waits until `untilMs`; `reason` reads after "paused by". */
  | { kind: 'paused'; what: PacedClass; untilMs: number; reason: string }
  /** The first request of a class told paused goes again. */
  | { kind: 'resumed'; what: PacedClass }
  | { kind: 'warning'; message: string }
  /** The webhook receiver listens (before the first submit); `address` is host:port as bound. */
  | { kind: 'webhooks_listening'; address: string; path: string }
  /** A request to the receiver refused, and why (never with its body, secret or signature). */
  | { kind: 'webhook_rejected'; status: number; reason: string }
  | { kind: 'webhooks_summary'; applied: number; duplicates: number; ignored: number; rejected: number };

/**
 * Submits whose request may have left and whose answer has not come. A stop waits for them (so
 * none becomes in doubt); the CLI reads the count to say what it is waiting for.
 */
export interface InFlight {
  submits: number;
  /** Of them, uploads (multipart, with images): these may take their longer timeout to answer. */
  uploads: number;
}

/**
 * What is left of a run, kept current by the runner for a caller that shows it (read, never
 * written, outside the runner), so the time left can be judged by the plan's pace.
 */
export function createRunProgress() {
  return {
    /** Price calls of an estimate or a run, as they go: what a caller shows while pricing takes long. */
    pricing: {
      /** Jobs read from the manifest and checked into the ledger so far (a million take a minute or more). */
      jobsRead: 0,
      /** Calls pricing has decided to make so far (a group that falls back to quoting every length adds more). */
      planned: 0,
      answered: 0,
      /** Held by the price pace (or a 429 pause) before they are sent. */
      waitingForPace: 0,
      waitingForAnswer: 0,
    },
    /** Planned submits not yet through (taken, refused, in doubt, skipped or given up), by kind. */
    toSend: {} as Partial<Record<JobType, number>>,
  };
}

export type RunProgress = ReturnType<typeof createRunProgress>;
export type PricingProgress = RunProgress['pricing'];

/**
 * What a run uses, built once by `run()` from what the composition root owns and passed down
 * unchanged. How a submitted job is followed to its end varies, so it is a `Completion`
 * (runner/follow.ts) passed beside it, not a field here.
 */
export interface RunDeps {
  readonly client: ServiceClient;
  /** Every change resolves once committed; changes asked for together share a commit. */
  readonly ledger: Ledger;
  readonly pace: Pace;
  readonly options: Readonly<RunOptions>;
  /** Aborted by the first Ctrl-C or SIGTERM, or by a fatal error: no new work starts. */
  readonly stop: AbortSignal;
  readonly emit: (event: RunEvent) => void;
  /** Where due times, give-up times and daily resets are read from. */
  readonly clock: Clock;
  /** Counted by submit.ts, read by the caller (what a stop waits for) and by webhook deliveries. */
  readonly inFlight: InFlight;
  readonly progress: RunProgress;
}

export function createRunDeps(
  parts: Omit<RunDeps, 'inFlight' | 'progress'> & { inFlight?: InFlight | undefined; progress?: RunProgress | undefined },
): RunDeps {
  // Submits, pace waits, polls and downloads in flight each listen to the stop signal: more than
  // Node's warning threshold of ten is the normal case here, not a leak.
  setMaxListeners(0, parts.stop);
  return { ...parts, inFlight: parts.inFlight ?? { submits: 0, uploads: 0 }, progress: parts.progress ?? createRunProgress() };
}

export type PollSchedules = Record<JobType, PollSchedule>;

/** The pace the service's own clients poll at, per kind (each kind module states it). */
export const servicePoll = (): PollSchedules => schedules((kind) => kind.poll.service);

/** The simulator finishes jobs in well under a second, so polling it at the service's pace only waits. */
export const simulatorPoll = (): PollSchedules => schedules((kind) => kind.poll.simulator);

export const uniformPoll = (schedule: PollSchedule): PollSchedules => schedules(() => schedule);

/**
 * `run --poll-ms MS`: every kind's first poll after MS, backing off ×1.5 up to 6×MS; the give-up
 * time stays the service's. For a local server (a simulator started apart, a test double) whose
 * jobs end in milliseconds: the status pace of the plan still bounds the calls.
 */
export function pollEvery(firstMs: number): PollSchedules {
  return schedules((kind) => ({ firstMs, maxMs: firstMs * 6, factor: 1.5, giveUpMs: kind.poll.service.giveUpMs }));
}

function schedules(of: (kind: JobKind) => PollSchedule): PollSchedules {
  return Object.fromEntries(JOB_KINDS.map((kind) => [kind.type, of(kind)])) as PollSchedules;
}
