/**
 * The ledger: what mediabatch knows about every job of one manifest, what it cost and what the
 * service answered. It is the only record of what was paid for, so every implementation keeps
 * the promises below (test/store/ledger-contract.ts checks each one): the SQLite ledger in src/,
 * and an in-memory one that only tests open (test/support/memory-ledger/). A caller takes the
 * role it uses (IngestLedger, PlanLedger …).
 */
import { ConfigError } from '../errors.js';
import type { JobState } from '../jobs/states.js';
import type { JobType } from '../jobs/types.js';
import type { MicroUsd } from '../money.js';

/**
 * One job of the manifest as the ledger records it: everything a submit sends (parameters, text,
 * images) is on the row, so the runner reads its work back in windows instead of holding it.
 */
export interface JobSpec {
  id: string;
  /** Manifest order (a unit's position and the row's place in it): listings and sends follow it. */
  index: number;
  contentHash: string;
  type: JobType;
  paramsJson: string;
  textChars?: number | undefined;
  text?: string | undefined;
  /** The media files it sends, by field (the manifest's MediaRef), with what they were found to be. */
  filesJson?: string | undefined;
  tags?: readonly string[] | undefined;
  /** `file:line:col`, for messages. */
  origin: string;
  /** Its price group: every priced field but the length. */
  groupKey: string;
  priceKey: string;
  /** A part of a split text: the id of the job it is a part of. */
  parentId?: string | undefined;
  /** Fields whose value is another job's result (`{ from: <id> }`), where each was written. */
  inputs?: readonly { field: string; from: string; origin: string }[] | undefined;
  /** Priced at the catalogue's upper bound: the real price is known once its inputs exist (priceForSend). */
  priceBound?: boolean | undefined;
}

/** Another job of the manifest holds its id (ignoring case). */
export interface IdConflict {
  id: string;
  origin: string;
  heldBy: { id: string; origin: string | null };
}

export type ChangedJob = PutResult['changed'][number];

export interface PutResult {
  conflicts: IdConflict[];
  /** Jobs already sent whose content differs now: they keep their old content and result. */
  changed: (Pick<JobRow, 'id' | 'state'> & { oldHash: string; newHash: string })[];
  /** Jobs whose content (new, or changed) is what another id was already paid for. */
  moved: { id: string; paidAs: { id: string; state: JobState } }[];
}

/** `changed`: jobs already sent with new content; `dropped`: no longer listed (still collected when paid for). */
export interface SyncResult {
  added: number;
  changed: number;
  dropped: number;
  listed: number;
}

/** A unit of a manifest (its inline jobs, or one source) as the ingest ends: read again, or kept as it was. */
export interface UnitState {
  key: string;
  position: number;
  fingerprint: string;
}

export interface UnitRecord extends UnitState {
  jobs: number;
  readAt: string;
}

/** A file a unit's rows named and its stamp (size and modification time) when it was read. */
export interface UnitFile {
  path: string;
  stamp: string;
}

/**
 * Brings the ledger in line with the manifest, unit by unit, in one transaction: nothing of it
 * is visible to another reader, or kept, until `commit`; `rollback` (a manifest with problems)
 * leaves the ledger as it was.
 *
 * - `keep(unit)`: a unit unchanged since it was last read; its jobs stay listed as they are.
 * - `put(unit, specs)`: in manifest order. A new id becomes pending; new content for a job
 *   nothing was paid for (pending, skipped, blocked, or a failure retryable and refunded) replaces the
 *   old and drops its price; a job already sent keeps its content and comes back in `changed`.
 *   New or changed content another id counts a spend for comes back in `moved` instead: the
 *   caller refuses the manifest, or would pay for that content twice.
 * - `commit(units)`: every job of a unit read again but not seen, and of a unit no longer
 *   listed, leaves the manifest; the units' fingerprints are stored.
 */
export interface LedgerIngest {
  keep(unitKey: string): Promise<void>;
  /**
   * Ids of rows that have problems (the ingest will be rolled back) still take part in the
   * uniqueness check, so a second job with such an id is reported in the same pass.
   */
  claim(unitKey: string, claims: readonly { id: string; origin: string }[]): Promise<IdConflict[]>;
  put(unitKey: string, specs: readonly JobSpec[]): Promise<PutResult>;
  /** So that the next ingest can tell whether the unit changed. */
  putUnitFiles(unitKey: string, files: readonly UnitFile[]): Promise<void>;
  commit(units: readonly UnitState[]): Promise<SyncResult>;
  rollback(): Promise<void>;
}

/**
 * The manifest's jobs; those and every dropped job outstanding, in doubt or done (`report`: what
 * a summary must not hide, every paid result included); those dropped ones alone; or every row.
 */
export type JobScope = 'manifest' | 'report' | 'dropped' | 'all';

/** `run --only`, `--tag`: a job is picked when each list given (not empty) has a match. */
export interface JobPick {
  /** Ids, or globs over the whole id as a shell matches file names, case-sensitive: `ch-0*`, `take-[12]`. */
  only?: readonly string[] | undefined;
  tags?: readonly string[] | undefined;
}

/**
 * The jobs a run may send, listed and picked: pending and skipped ones, failures the service
 * called retryable and refunded, in-doubt ones when asked for, and the done or failed jobs in
 * `redo`. Pricing, the plan, the budget check, --partial and the submits all read this one.
 */
export interface SendSelection extends JobPick {
  resubmitInDoubt: boolean;
  /** `run --redo`: priced and budgeted as any job to send. */
  redo?: readonly string[] | undefined;
}

/** Where a window of jobs ended: rows are ordered by manifest index, then id. */
export type JobCursor = Pick<JobSpec, 'index' | 'id'>;

/**
 * Every field given narrows the rows read, except `flagSend`, which says of each row whether a
 * run with that selection may send it (JobRow.toSend). `types`: one endpoint class's kinds (the
 * runner sends each class in a lane of its own); `pick`: whatever their state; `failedAfter`: an
 * event id from `lastEventId`, so this run's failures, which `--retries` sends again; `through`:
 * a manifest index. `after`, the last row of the previous window, makes it a window of a walk,
 * read in manifest order at the cost of its own size; without it, a listing, which the ledger
 * may answer by state first.
 */
export interface JobQuery {
  scope: JobScope;
  states?: readonly JobState[] | undefined;
  types?: readonly JobType[] | undefined;
  send?: SendSelection | undefined;
  pick?: JobPick | undefined;
  failedAfter?: number | undefined;
  issue?: CollectIssue | undefined;
  flagSend?: SendSelection | undefined;
  after?: JobCursor | undefined;
  through?: number | undefined;
  /** Only jobs every input of which is done (a job without inputs is ready). */
  ready?: true | undefined;
  limit: number;
}

/** A job that was sent and is to be followed, in the order it became submitted. */
export interface FollowRow extends Pick<JobRow, 'id' | 'type' | 'paramsJson' | 'submittedAt'> {
  requestId: string;
  followSeq: number;
}

/**
 * `paramsJson`: one of its jobs' (every job of the group shares the priced ones); `lengths`, for
 * kinds priced by length: the distinct lengths and their job counts.
 */
export interface PriceGroupRow extends Pick<JobRow, 'type' | 'paramsJson'> {
  groupKey: string;
  jobs: number;
  lengths: { chars: number; jobs: number }[];
}

/** `source`: quoted, derived or cached. */
export interface KeyPrice {
  priceKey: string;
  priceMicro: MicroUsd;
  source: string;
}

/** Jobs and money by kind, model, price group and price source, and whether they are to be sent. */
export interface CostRow extends Pick<JobRow, 'type' | 'groupKey' | 'priceSource'> {
  model: string | null;
  toSend: boolean;
  jobs: number;
  priceMicro: MicroUsd;
  unpriced: number;
}

/** One job as the ledger holds it. Timestamps are ISO 8601 strings. */
export interface JobRow {
  id: string;
  manifestIndex: number;
  contentHash: string;
  type: JobType;
  paramsJson: string;
  textChars: number | null;
  text: string | null;
  filesJson: string | null;
  tags: string[];
  /** null for rows from before mediabatch kept it. */
  origin: string | null;
  inManifest: boolean;
  parentId: string | null;
  /** Field → the id of the job whose result it takes; null without inputs. */
  inputs: Record<string, string> | null;
  priceBound: boolean;
  /** 1 without inputs, else 1 + its inputs' largest; null for a job the manifest no longer lists. */
  step: number | null;
  groupKey: string | null;
  priceMicro: MicroUsd | null;
  priceSource: string | null;
  priceKey: string | null;
  state: JobState;
  requestId: string | null;
  attempts: number;
  /** The spend rule on reserveForSubmit. */
  spentMicro: MicroUsd;
  lastError: string | null;
  /** What the service said of its failure; null when it did not fail at the service. */
  retryable: boolean | null;
  refunded: boolean | null;
  /** Set on a `submitted` job an earlier look left uncollected; `lastError` says why. */
  issue: CollectIssue | null;
  toSend?: boolean | undefined;
  resultPath: string | null;
  resultBytes: number | null;
  resultSha256: string | null;
  createdAt: string;
  updatedAt: string;
  submittedAt: string | null;
  finishedAt: string | null;
}

/**
 * Why a paid job is still `submitted` after a run asked about it: its result could not be saved
 * (refused URL, too large, not the media asked for, cut download), or the service could not say
 * how it is. Neither is a failure: its request id is the only handle on a paid result, so every
 * later run asks again.
 */
export type CollectIssue = 'not_collected' | 'status_unknown';

/** `id` grows with every event appended: the log's order. */
export interface EventRow {
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
/** Or the job that already holds the request id the service answered (→ in_doubt). */
export type SubmittedResult = 'submitted' | { conflictWith: string };
/** 'failed' is retryable and refunded; any other failure ('failed_for_good') and 'done' are sent again on purpose. */
export type ReservableState = 'pending' | 'skipped' | 'in_doubt' | 'failed' | 'failed_for_good' | 'done';

/** Dollars as the service gave them, or fitted per-character rates: fractions of a micro-dollar. */
export interface CachedPrice {
  priceUsd: number;
  source: string;
  ageMs: number;
}

export interface WebhookRun {
  id: number;
  /** Never shown: not in output, reports, logs or events. */
  secret: string;
}

/** Found by the request id a delivery names. */
export interface DeliveryJob extends Pick<JobRow, 'id' | 'type' | 'state' | 'paramsJson'> {
  /** The run that sent it with webhooks (its secret signs the job's deliveries); null: sent without. */
  webhookRun: number | null;
}

export interface LockHolder {
  pid: number;
  host: string;
  /** Shown to whoever finds the ledger locked (never holds a token). */
  command: string;
}

/**
 * The lock's liveness rule, the same in every ledger: a holder on another host cannot be checked
 * from here, so it counts as alive; here signal 0 tells whether the pid exists (EPERM: someone else's).
 */
export function holderIsAlive(holder: Pick<LockHolder, 'pid' | 'host'>, thisHost: string): boolean {
  if (holder.host !== thisHost) return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Why a job waits on input `fromId` (settleBlocked), worded alike in both ledgers; `waits`: that input waits too. */
export function blockedReason(fromId: string, input: Pick<JobRow, 'state' | 'lastError'>, waits: boolean): string {
  const name = `input "${fromId}"`;
  if (waits || input.state === 'blocked') return `${name} is blocked`;
  if (input.state === 'failed') return `${name} failed: ${input.lastError ?? 'no reason given'}`;
  if (input.state === 'in_doubt') return `${name} is in doubt`;
  if (input.state === 'skipped') return `${name} was left out (${input.lastError ?? 'not selected'})`;
  return `${name} is not to be sent`;
}

export class LedgerLockedError extends ConfigError {
  constructor(
    message: string,
    readonly holder: LockHolder,
  ) {
    super(message, 'E_LOCKED');
  }
}

export interface IngestLedger {
  /** While the ingest is open, nothing else may change the ledger through this handle. */
  beginIngest(): Promise<LedgerIngest>;
  units(): Promise<UnitRecord[]>;
  /** In windows by path. */
  unitFiles(unitKey: string, afterPath: string, limit: number): Promise<UnitFile[]>;
}

export interface ListingLedger {
  getJob(id: string): Promise<JobRow | undefined>;
  /** In manifest order, a window at a time: every listing and every submit reads this way. */
  readJobs(query: JobQuery): Promise<JobRow[]>;
  countJobs(query: Omit<JobQuery, 'after' | 'limit'>): Promise<number>;
  /** Submitted jobs with a request id, in the order they became submitted. */
  readFollowing(afterSeq: number, limit: number): Promise<FollowRow[]>;
  /** The parts of a split job the manifest lists, in order. */
  readParts(parentId: string): Promise<JobRow[]>;
  /** Split jobs whose listed parts are all done, by id: the joins a run writes. */
  splitsDone(afterId: string, limit: number): Promise<string[]>;
  /** Over `scope` (default: every row). */
  countsByState(scope?: JobScope): Promise<Record<JobState, number>>;
  /** Changes with every write to a job, from any process: a document need not be written again at one version. */
  jobsVersion(): Promise<number>;
  /** 0 for an empty log: a later query's `failedAfter` starts there. */
  lastEventId(): Promise<number>;
  /**
   * Oldest first (`mediabatch log`), a window at a time: after `afterId` (0, then the last id
   * read), at most `limit` (a whole number ≥ 1); only `jobId`'s, or every event. Empty at the end.
   */
  readEvents(window: { afterId: number; limit: number; jobId?: string | undefined }): Promise<EventRow[]>;
}

export interface PlanLedger {
  priceGroups(send: SendSelection): Promise<PriceGroupRow[]>;
  /** In one transaction; a job already sent keeps the price it was sent at. */
  applyPrices(prices: readonly KeyPrice[], send: SendSelection): Promise<void>;
  /** The manifest's jobs; with 'to_send' only those `send` selects (a plan's), found without reading the rest. */
  costRows(send: SendSelection, only?: 'to_send'): Promise<CostRow[]>;
  /** `--partial`: the selected jobs after `after` are left out; pending ones become skipped; each gets an event. */
  skipAfter(after: number, send: SendSelection, reason: string): Promise<{ leftOut: number; skipped: number }>;
  /** The parts of `pick` that match no job of the manifest. */
  unmatchedPicks(pick: JobPick): Promise<{ only: string[]; tags: string[] }>;
  /** Every job's, earlier runs included. */
  spentMicro(): Promise<MicroUsd>;
  getPrices(maxAgeMs: number): Promise<Map<string, CachedPrice>>;
  /** Keyed by the price parameters, canonicalised by pricing/ (never a token). */
  putPrices(rows: readonly (Omit<CachedPrice, 'ageMs'> & { key: string })[]): Promise<void>;
  /** Cached prices that turned out to be out of date. */
  forgetPrices(keys: readonly string[]): Promise<void>;
  /** The parsed models catalogue, if it is at most `maxAgeMs` old. */
  getCatalogue(baseUrl: string, maxAgeMs: number): Promise<unknown>;
  putCatalogue(baseUrl: string, json: unknown): Promise<void>;
}

/** Every state change of a job (src/jobs/states.ts), each with its event in one step. */
export interface TransitionLedger {
  /** Every `submitting` job (a crash between our commit and the service's answer) → `in_doubt`. */
  recoverInterrupted(): Promise<string[]>;
  /**
   * The budget check before every submit. In one transaction that no other reservation can
   * interleave with, even from another process: checks the job is in one of `allowFrom`, that
   * the whole spend with its price stays within `budgetMicro` (null: no cap; the rule is
   * `withinBudget` of src/money.ts), then makes it `submitting` with its price counted.
   *
   * The spend rule: a job's spend becomes its price (plus what earlier attempts may have cost:
   * an in-doubt one, or a done one generated again) when it is reserved, stays through
   * submitted, done and in_doubt, and falls back to those earlier attempts only when the
   * service provably did not take it, refused it, or refunded it. A done job keeps its result
   * on the row, and `earlierResult` in the event, until markDone records the new one.
   * The sha256 of each input's result, as it is sent, is recorded with the reservation.
   */
  reserveForSubmit(jobId: string, budgetMicro: MicroUsd | null, allowFrom: readonly ReservableState[]): Promise<ReserveResult>;
  /**
   * A request id another job already holds means a misbehaving service and no way to tell which
   * job it means: this one goes `in_doubt` instead (its price stays counted), the other keeps it.
   */
  markSubmitted(jobId: string, requestId: string): Promise<SubmittedResult>;
  /** submitting → pending, reservation released: the service provably did not take it. */
  markNotTaken(jobId: string, reason: string): Promise<void>;
  /** submitting → failed, reservation released: the service refused the job. */
  markRefused(jobId: string, reason: string): Promise<void>;
  /** submitting → in_doubt: it may have been taken; its price stays counted as spent. */
  markInDoubt(jobId: string, reason: string): Promise<void>;
  markDone(jobId: string, result: { path: string; bytes: number; sha256: string }): Promise<void>;
  /** submitted → failed. A retryable, refunded one may be sent again; its spend falls back to earlier attempts'. */
  markFailedRemote(jobId: string, failure: { reason: string; retryable: boolean; refunded: boolean }): Promise<void>;
  /**
   * pending → skipped. A job skipped, in_doubt (its price must stay counted), failed or done
   * stays as it is, with an event saying why.
   */
  markSkipped(jobId: string, reason: string): Promise<void>;
  /** `reason` as its error, and an event of kind `issue`. */
  noteUncollected(jobId: string, issue: CollectIssue, reason: string): Promise<void>;
  /** Still running at the service: an earlier note is cleared. */
  noteStillRunning(jobId: string): Promise<void>;
  /** An event that changes no state: run-level (jobId null) or a note on a job. */
  recordEvent(jobId: string | null, kind: string, detail?: unknown): Promise<void>;
}

/** One `{ from }` of a listed job, with what the ledger knows of the job it names. */
export interface InputRef {
  jobId: string;
  jobType: JobType;
  field: string;
  fromId: string;
  /** null: no listed job holds that id (a split job's parts give theirs). */
  fromType: JobType | null;
  /** The id names a split job, whose result is a join of its parts. */
  fromSplit: boolean;
  origin: string;
  /** The job has a step: it is in no cycle and takes from none (a cycle's jobs get none at ingest). */
  stepped: boolean;
}

/** A job already sent whose input has another result now (the input was generated again). */
export interface ChangedInput extends Pick<JobRow, 'id' | 'state'> {
  field: string;
  fromId: string;
}

/**
 * The jobs that take other jobs' results (JobSpec.inputs). Steps are the ingest's: it computes
 * them for the listed jobs when it commits. Reasons name the input: `input "poster" failed: …`.
 */
export interface GraphLedger {
  /** Every input of a listed job, a window at a time in (jobId, field) order after `after`. */
  readInputs(after: Pick<InputRef, 'jobId' | 'field'> | undefined, limit: number): Promise<InputRef[]>;
  /** The jobs `send` selects that take `upstreamId`'s result and are ready now, in manifest order. */
  dependentsReady(upstreamId: string, send: SendSelection): Promise<JobRow[]>;
  /**
   * In one transaction: a pending or skipped job with an input that is not done and that `send`
   * will not send (null: after a run, nothing more is sent), or that waits on such a job, becomes
   * `blocked` with the reason; a blocked job none of whose inputs is so becomes `pending`. An event each.
   */
  settleBlocked(send: SendSelection | null): Promise<{ blocked: number; unblocked: number }>;
  /** Its real price, before its reservation, for a job pending, skipped or blocked: no longer a bound. */
  priceForSend(jobId: string, price: KeyPrice): Promise<void>;
  /** Jobs already sent whose input's result is not the one they were sent with (reserveForSubmit records it). */
  inputsChanged(limit: number): Promise<ChangedInput[]>;
}

export interface WebhookLedger {
  /** A secret of 32–255 characters; the run's number. Kept: the service retries deliveries for a day. */
  addWebhookRun(secret: string): Promise<number>;
  webhookRuns(): Promise<WebhookRun[]>;
  jobForDelivery(requestId: string): Promise<DeliveryJob | undefined>;
  /** A later send by another run replaces the note. Asked in the same turn as markSubmitted, it commits with it. */
  noteWebhookRun(jobId: string, runId: number): Promise<void>;
  /**
   * A verified delivery, recorded so that its id is applied at most once: true the first time,
   * false (and nothing written) for an id seen before. `jobId` null: no job here holds its request id.
   */
  recordDelivery(delivery: { deliveryId: string; event: string; jobId: string | null }): Promise<boolean>;
}

export interface LedgerHandle {
  /** As messages name it (for SQLite, the file). */
  readonly location: string;
  readonly readonly: boolean;
  getMeta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string): Promise<void>;
  /**
   * Makes this process the only one running jobs from this ledger. A lock whose holder is
   * still alive is refused (LedgerLockedError, E_LOCKED); a dead holder's lock is taken over.
   */
  acquireRunLock(holder: LockHolder): Promise<void>;
  /** If this handle holds it. */
  releaseRunLock(): Promise<void>;
  /** What is committed, as a ledger of its own: for a command that must not change this one (it is locked). */
  copyTo(file: string): Promise<void>;
  /** Until every change asked for has its answer (some are not awaited: a request id, a webhook note). */
  flush(): Promise<void>;
  /** As flush, then releases the run lock if held and closes. Safe to call twice. */
  close(): Promise<void>;
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
export interface Ledger
  extends IngestLedger, ListingLedger, PlanLedger, TransitionLedger, GraphLedger, WebhookLedger, LedgerHandle {}
