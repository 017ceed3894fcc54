/**
 * The ledger: what mediabatch knows about every job of one manifest, what it cost and what the
 * service answered. It is the only record of what was paid for, so every implementation keeps
 * the promises below; test/store/ledger-contract.ts checks them against each one.
 *
 * Nothing here names a database. The SQLite ledger (store/sqlite/) is the one mediabatch ships.
 */
import type { JobState } from '../jobs/states.js';
import type { JobType } from '../jobs/types.js';
import type { MicroUsd } from '../money.js';

/** One job of the manifest, as syncJobs records it. */
export interface JobSpec {
  id: string;
  /** 0-based position in the manifest: listings follow it. */
  index: number;
  contentHash: string;
  type: JobType;
  paramsJson: string;
  textChars?: number | undefined;
}

export interface ChangedJob {
  id: string;
  oldHash: string;
  newHash: string;
  state: JobState;
}

export interface SyncResult {
  added: number;
  /** Jobs already sent whose content differs now: they keep their old result. */
  changed: ChangedJob[];
}

export interface JobPrice {
  id: string;
  priceMicro: MicroUsd;
  /** quoted | derived | cached */
  source: string;
  priceKey: string;
}

/** One job as the ledger holds it. Timestamps are ISO 8601 strings. */
export interface JobRow {
  id: string;
  manifestIndex: number;
  contentHash: string;
  type: JobType;
  paramsJson: string;
  textChars: number | null;
  priceMicro: MicroUsd | null;
  priceSource: string | null;
  priceKey: string | null;
  state: JobState;
  requestId: string | null;
  attempts: number;
  /** What the ledger counts as committed for this job (the spend rule on reserveForSubmit). */
  spentMicro: MicroUsd;
  lastError: string | null;
  resultPath: string | null;
  resultBytes: number | null;
  resultSha256: string | null;
  createdAt: string;
  updatedAt: string;
  submittedAt: string | null;
  finishedAt: string | null;
}

/** The little of a row that planning needs: read for every job, so kept small. */
export interface JobView {
  id: string;
  type: JobType;
  state: JobState;
  requestId: string | null;
  spentMicro: MicroUsd;
  /** The speech `format` it was sent with (null for other kinds): names a result file. */
  format: string | null;
}

/**
 * Why a paid job is still `submitted` after a run asked about it:
 * - 'not_collected': the service finished it, but its result could not be saved (a refused
 *   URL, a result over the size limit, bytes that are not the media asked for, a cut download);
 * - 'status_unknown': the service could not say how it is (404 for its request id, unreachable).
 * Neither is a failure of the job: its request id is the only handle on a paid result, so every
 * later run asks again.
 */
export type CollectIssue = 'not_collected' | 'status_unknown';

/** What became of a job, as reports show it: read for every job at the end of a run. */
export interface JobOutcome {
  id: string;
  type: JobType;
  model: string | null;
  /** quoted | derived | cached, as pricing found it. */
  priceSource: string | null;
  state: JobState;
  requestId: string | null;
  priceMicro: MicroUsd | null;
  /** Path of the downloaded result. */
  output: string | null;
  error: string | null;
  /** Set on a `submitted` job an earlier look left uncollected; `error` says why. */
  issue: CollectIssue | null;
}

export interface EventRow {
  /** Grows with every event appended: the log's order. */
  id: number;
  at: string;
  /** null for run-level events (lock taken over, sync summary …). */
  jobId: string | null;
  kind: string;
  fromState: JobState | null;
  toState: JobState | null;
  detail: unknown;
}

export type ReserveResult = 'reserved' | 'over-budget' | 'wrong-state';
/** 'submitted', or the job that already holds the request id the service answered (→ in_doubt). */
export type SubmittedResult = 'submitted' | { conflictWith: string };
export type ReservableState = 'pending' | 'skipped' | 'in_doubt';

export interface RemoteFailure {
  reason: string;
  retryable: boolean;
  refunded: boolean;
}

export interface StoredResult {
  path: string;
  bytes: number;
  sha256: string;
}

/**
 * A cached price. The cache holds what pricing stores: quotes in dollars as the service gave
 * them, and fitted per-character rates, which are fractions of a micro-dollar.
 */
export interface CachedPrice {
  priceUsd: number;
  source: string;
  ageMs: number;
}

export interface PriceEntry {
  /** The price parameters, canonicalised by pricing/ (never a token). */
  key: string;
  priceUsd: number;
  source: string;
}

/** A run that sent jobs with webhooks, and the secret their deliveries are signed with. */
export interface WebhookRun {
  id: number;
  /** Never shown: not in output, reports, logs or events. */
  secret: string;
}

/** A job as a webhook delivery finds it, by the request id the service names. */
export interface DeliveryJob {
  id: string;
  type: JobType;
  state: JobState;
  /** The speech `format` it was sent with (null for other kinds): names a result file. */
  format: string | null;
  /** The run that sent it with webhooks (its secret signs the job's deliveries); null: sent without. */
  webhookRun: number | null;
}

/** A verified webhook delivery, recorded so that its id is applied at most once. */
export interface DeliveryRecord {
  deliveryId: string;
  /** `job.processing`, `job.completed`, `job.failed`, as the service names it. */
  event: string;
  /** The job it names; null when no job of this ledger holds its request id. */
  jobId: string | null;
}

export interface LockHolder {
  pid: number;
  host: string;
  /** The command line shown to whoever finds the ledger locked (never holds a token). */
  command: string;
}

/**
 * The ledger of one manifest. Every method answers once what it did is durable: a promise of a
 * change settles only after its commit, so a caller that awaits `reserveForSubmit` knows the
 * `submitting` row is stored before it sends a byte. Changes asked for together may share one
 * commit; each still succeeds or fails on its own.
 *
 * Errors keep their kind: what the user must fix (disk full, file unreadable, locked, deleted
 * under a run) is a LocalIoError or ConfigError with a stable code; a call the state machine
 * refuses (src/jobs/states.ts) is a bug in mediabatch, a plain Error saying so, and changes
 * nothing. A read-only ledger refuses every change the same way.
 *
 * Money is whole micro-dollars (src/money.ts). Nothing here takes a token.
 */
export interface Ledger {
  /** Where the ledger lives, as messages name it (for SQLite, the file). */
  readonly location: string;
  /** Opened for `status`: reads only. */
  readonly readonly: boolean;

  /**
   * Brings the ledger in line with the manifest, in one transaction: new ids become pending;
   * a pending or skipped job whose content changed takes the new content and loses its price
   * (nothing was paid); any other changed job is left alone and reported.
   */
  syncJobs(specs: readonly JobSpec[]): Promise<SyncResult>;
  /** Records each job's price, all or none. Money already reserved (its spend) is not touched. */
  setPrices(rows: readonly JobPrice[]): Promise<void>;

  getJob(id: string): Promise<JobRow | undefined>;
  /** Every job's state, request id and spend, in no particular order. */
  jobViews(): Promise<JobView[]>;
  /** Every job's outcome, in manifest order. */
  jobOutcomes(): Promise<JobOutcome[]>;
  countsByState(): Promise<Record<JobState, number>>;
  /** What the ledger counts as spent: the sum of every job's spend, earlier runs included. */
  spentMicro(): Promise<MicroUsd>;
  /** A job's events, oldest first (what `mediabatch log --job` shows); null: the run-level events. */
  eventsFor(jobId: string | null): Promise<EventRow[]>;

  /** Every `submitting` job (a crash between our commit and the service's answer) → `in_doubt`. */
  recoverInterrupted(): Promise<string[]>;
  /**
   * The budget check before every submit. In one transaction that no other reservation can
   * interleave with, even from another process: checks the job is in one of `allowFrom`, that
   * the whole spend with its price stays within `budgetMicro` (null: no cap; the rule is
   * `withinBudget` of src/money.ts), then makes it `submitting` with its price counted.
   *
   * The spend rule: a job's spend becomes its price (plus what earlier in-doubt attempts may
   * have cost) when it is reserved, stays through submitted, done and in_doubt, and falls back
   * to those earlier attempts only when the service provably did not take it, refused it, or
   * refunded it.
   */
  reserveForSubmit(jobId: string, budgetMicro: MicroUsd | null, allowFrom: readonly ReservableState[]): Promise<ReserveResult>;
  /**
   * submitting → submitted with the service's request id. A request id the ledger already gives
   * to another job is a conflict: a misbehaving service, and no way to tell which job it means.
   * The job goes `in_doubt` instead (its price stays counted) and the other keeps the id.
   */
  markSubmitted(jobId: string, requestId: string): Promise<SubmittedResult>;
  /** submitting → pending, reservation released: the service provably did not take it. */
  markNotTaken(jobId: string, reason: string): Promise<void>;
  /** submitting → failed, reservation released: the service refused the job. */
  markRefused(jobId: string, reason: string): Promise<void>;
  /** submitting → in_doubt: it may have been taken; its price stays counted as spent. */
  markInDoubt(jobId: string, reason: string): Promise<void>;
  /** submitted → done, with where its result is. */
  markDone(jobId: string, result: StoredResult): Promise<void>;
  /** submitted → failed, or → pending when retryable and refunded (a later run sends it again). */
  markFailedRemote(jobId: string, failure: RemoteFailure): Promise<void>;
  /**
   * pending → skipped. A job already skipped, or in_doubt (not resending it is the default
   * anyway, and its price must stay counted), stays as it is, with an event saying why.
   */
  markSkipped(jobId: string, reason: string): Promise<void>;
  /** submitted → submitted, `reason` as its error, and an event of kind `issue`. */
  noteUncollected(jobId: string, issue: CollectIssue, reason: string): Promise<void>;
  /** submitted → submitted: asked, and still running at the service; an earlier note is cleared. */
  noteStillRunning(jobId: string): Promise<void>;
  /** An event that changes no state: run-level (jobId null) or a note on a job. */
  recordEvent(jobId: string | null, kind: string, detail?: unknown): Promise<void>;

  /** Every cached price at most `maxAgeMs` old, by key. */
  getPrices(maxAgeMs: number): Promise<Map<string, CachedPrice>>;
  putPrices(rows: readonly PriceEntry[]): Promise<void>;
  /** Drops cached prices that turned out to be out of date. */
  forgetPrices(keys: readonly string[]): Promise<void>;
  /** The parsed models catalogue of `baseUrl` if it is at most `maxAgeMs` old. */
  getCatalogue(baseUrl: string, maxAgeMs: number): Promise<unknown>;
  putCatalogue(baseUrl: string, json: unknown): Promise<void>;
  getMeta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string): Promise<void>;

  /**
   * Stores a new run's webhook secret (32–255 characters) and answers the run's number. The
   * secrets are kept for as long as the ledger: the service retries deliveries for a day.
   */
  addWebhookRun(secret: string): Promise<number>;
  /** Every run's webhook secret, oldest first. */
  webhookRuns(): Promise<WebhookRun[]>;
  /** The job holding `requestId`, with the run that sent it; undefined when no job does. */
  jobForDelivery(requestId: string): Promise<DeliveryJob | undefined>;
  /**
   * Notes that run `runId` sent job `jobId` (a later send by another run replaces the note).
   * Asked in the same turn as markSubmitted, it commits with it.
   */
  noteWebhookRun(jobId: string, runId: number): Promise<void>;
  /** Records a delivery by its id: true the first time, false (and nothing written) for an id seen before. */
  recordDelivery(delivery: DeliveryRecord): Promise<boolean>;

  /**
   * Makes this process the only one running jobs from this ledger. A lock whose holder is
   * still alive is refused (ConfigError E_LOCKED); a dead holder's lock is taken over.
   */
  acquireRunLock(holder: LockHolder): Promise<void>;
  /** Drops the lock if this handle holds it. */
  releaseRunLock(): Promise<void>;

  /**
   * Waits until every change asked for so far has its answer. A run calls it once its changes
   * are done, before it reads its summary; an implementation may let go of what it keeps for
   * changes (the SQLite ledger's writer thread) until the next one.
   */
  flush(): Promise<void>;
  /** Waits for every change asked for so far, releases the run lock if held, then closes. Safe to call twice. */
  close(): Promise<void>;
}
