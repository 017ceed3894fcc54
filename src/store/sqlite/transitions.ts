import { progressOf, type JobProgress, type StoreContext } from './context.js';
import type { RawJob } from './rows.js';
import { assertTransition, type JobState } from '../../jobs/states.js';

/** Float sums of small prices drift by far less than this; a cap is never missed by more. */
const EPSILON_USD = 1e-9;

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
 * Every state change of a job. Each runs in one transaction that checks the current state,
 * writes the row and appends its event, so the log and the rows can never disagree.
 *
 * The spend rule: `spent_usd` is set to the price when a job becomes `submitting` (the
 * reservation), kept through submitted/done/in_doubt, and set to 0 only when the service
 * provably did not take the job, refused it, or ended it with `refunded: true`.
 */
export interface JobTransitions {
  /** Every `submitting` row (a crash between our commit and the service's answer) → `in_doubt`. */
  recoverInterrupted(): string[];
  /**
   * In one IMMEDIATE transaction: checks the state is in `allowFrom` and that the ledger's whole
   * spend with this job's price stays within `budgetUsd` (null: no cap), then reserves the price.
   */
  reserveForSubmit(id: string, budgetUsd: number | null, allowFrom: readonly ReservableState[]): ReserveResult;
  /**
   * submitting → submitted with the service's request id. A request id the ledger already gives
   * to another job is a conflict: a misbehaving service, and no way to tell which job it means.
   * The job goes `in_doubt` instead (its price stays counted) and the other keeps the id.
   */
  markSubmitted(id: string, requestId: string): SubmittedResult;
  /** submitting → pending, reservation released: the service provably did not take it. */
  markNotTaken(id: string, reason: string): void;
  /** submitting → failed, reservation released: the service refused the job. */
  markRefused(id: string, reason: string): void;
  /** submitting → in_doubt: it may have been taken; its price stays counted as spent. */
  markInDoubt(id: string, reason: string): void;
  markDone(id: string, result: StoredResult): void;
  /** submitted → failed, or → pending when retryable and refunded (a later run sends it again). */
  markFailedRemote(id: string, failure: RemoteFailure): void;
  /** submitted → submitted: the status or result URL was refreshed; only an event is added. */
  markRefreshed(id: string, reason: string): void;
  /**
   * pending → skipped. A row already skipped, or in_doubt (not resending it is the default
   * anyway, and its price must stay counted), is left in its state with an event saying why.
   */
  markSkipped(id: string, reason: string): void;
  unskip(id: string): void;
  /** failed → pending for a retryable failure; refused if its price is still counted as spent. */
  requeueFailed(id: string, reason: string): void;
}

type Change = (row: RawJob, now: string) => Partial<JobProgress>;

export function createTransitions(ctx: StoreContext): JobTransitions {
  const { db } = ctx;

  const move = (row: RawJob, to: JobState, kind: string, detail: object, change: Change): void => {
    assertTransition(row.id, row.state, to);
    const now = ctx.nowIso();
    const next: JobProgress = { ...progressOf(row), ...change(row, now), state: to };
    if (!ctx.writeProgress(row.id, row.state, next, now)) throw bug(row.id, `changed state under us (was ${row.state})`);
    ctx.insertEvent(row.id, kind, row.state, to, { ...detail, spentUsd: next.spentUsd }, now);
  };

  const load = (id: string, expectFrom: readonly JobState[], action: string): RawJob => {
    const row = ctx.getRawJob(id);
    if (row === undefined) throw bug(id, `is not in the ledger (${action})`);
    if (!expectFrom.includes(row.state)) {
      throw bug(id, `cannot be ${action} from ${row.state} (only from ${expectFrom.join(', ')})`);
    }
    return row;
  };

  /** Builds a transactional method: load the row in one of `from`, then move it. */
  const step = <A extends unknown[], R = void>(
    action: string,
    from: readonly JobState[],
    body: (row: RawJob, ...args: A) => R,
  ): ((id: string, ...args: A) => R) => {
    const run = db.transaction((id: string, ...args: A) => body(load(id, from, action), ...args));
    return (id, ...args) => run(id, ...args);
  };

  const selectRequestHolder = db.prepare<[string, string], { id: string }>('SELECT id FROM jobs WHERE request_id = ? AND id <> ? LIMIT 1');

  const selectSubmitting = db.prepare<[], RawJob>(
    "SELECT * FROM jobs WHERE state = 'submitting' ORDER BY manifest_index",
  );
  const recover = db.transaction((): string[] => {
    const rows = selectSubmitting.all();
    for (const row of rows) {
      move(row, 'in_doubt', 'recovered', { reason: 'crashed while submitting' }, () => ({
        lastError: 'crashed while submitting: the service may have taken it',
      }));
    }
    return rows.map((row) => row.id);
  });

  const reserve = db.transaction(
    (id: string, budgetUsd: number | null, allowFrom: readonly ReservableState[]): ReserveResult => {
      const row = ctx.getRawJob(id);
      if (row === undefined) throw bug(id, 'is not in the ledger (reserve)');
      if (!(allowFrom as readonly JobState[]).includes(row.state)) return 'wrong-state';
      const priceUsd = row.price_usd;
      if (priceUsd === null) throw bug(id, 'has no price; prices are set before anything is reserved');
      // What this row already counts (an in-doubt attempt that may have been charged) stays
      // counted: sending it again may pay twice, and the budget must see both.
      const carriedUsd = row.spent_usd;
      const spentAfterUsd = ctx.spentTotalUsd() + priceUsd;
      if (budgetUsd !== null && spentAfterUsd > budgetUsd + EPSILON_USD) return 'over-budget';
      move(row, 'submitting', 'reserved', { priceUsd, carriedUsd, budgetUsd, spentTotalUsd: spentAfterUsd }, () => ({
        spentUsd: carriedUsd + priceUsd,
        carriedUsd,
        attempts: row.attempts + 1,
        requestId: null,
        lastError: null,
        submittedAt: null,
      }));
      return 'reserved';
    },
  );

  return {
    recoverInterrupted: () => recover.immediate(),
    // IMMEDIATE takes the write lock before reading the total, so a second process cannot
    // reserve between our read and our write and push the ledger past the budget.
    reserveForSubmit: (id, budgetUsd, allowFrom) => reserve.immediate(id, budgetUsd, allowFrom),
    markSubmitted: step('submitted', ['submitting'], (row, requestId: string): SubmittedResult => {
      const holder = selectRequestHolder.get(requestId, row.id);
      if (holder !== undefined) {
        const reason = `the service answered request id ${requestId}, which it had already given to job "${holder.id}": whether it took this job cannot be known`;
        move(row, 'in_doubt', 'request_id_conflict', { requestId, heldBy: holder.id }, () => ({ lastError: reason }));
        return { conflictWith: holder.id };
      }
      move(row, 'submitted', 'submitted', { requestId }, (_, now) => ({ requestId, submittedAt: now }));
      return 'submitted';
    }),
    markNotTaken: step('released as not taken', ['submitting'], (row, reason: string) =>
      move(row, 'pending', 'not_taken', { reason }, () => ({ spentUsd: row.carried_usd, lastError: reason })),
    ),
    markRefused: step('refused', ['submitting'], (row, reason: string) =>
      move(row, 'failed', 'refused', { reason }, (_, now) => ({ spentUsd: row.carried_usd, lastError: reason, finishedAt: now })),
    ),
    markInDoubt: step('put in doubt', ['submitting'], (row, reason: string) =>
      move(row, 'in_doubt', 'in_doubt', { reason }, () => ({ lastError: reason })),
    ),
    markDone: step('done', ['submitted'], (row, result: StoredResult) =>
      move(row, 'done', 'done', { ...result }, (_, now) => ({
        resultPath: result.path,
        resultBytes: result.bytes,
        resultSha256: result.sha256,
        lastError: null,
        finishedAt: now,
      })),
    ),
    markFailedRemote: step('failed remotely', ['submitted'], (row, failure: RemoteFailure) => {
      // A refund covers this attempt; what earlier in-doubt attempts may have cost stays counted.
      const spentUsd = failure.refunded ? row.carried_usd : row.spent_usd;
      if (failure.retryable && failure.refunded) {
        move(row, 'pending', 'failed_retryable', { ...failure }, () => ({
          spentUsd,
          lastError: failure.reason,
          requestId: null,
        }));
        return;
      }
      move(row, 'failed', 'failed', { ...failure }, (_, now) => ({
        spentUsd,
        lastError: failure.reason,
        finishedAt: now,
      }));
    }),
    markRefreshed: step('refreshed', ['submitted'], (row, reason: string) =>
      move(row, 'submitted', 'refreshed', { reason }, () => ({})),
    ),
    markSkipped: step('skipped', ['pending', 'skipped', 'in_doubt'], (row, reason: string) => {
      if (row.state !== 'pending') {
        ctx.insertEvent(row.id, 'not_sent', row.state, row.state, { reason });
        return;
      }
      move(row, 'skipped', 'skipped', { reason }, () => ({ lastError: reason }));
    }),
    unskip: step('unskipped', ['skipped'], (row) => move(row, 'pending', 'unskipped', {}, () => ({ lastError: null }))),
    requeueFailed: step('requeued', ['failed'], (row, reason: string) => {
      // Sending it again would replace this row's spend with a new reservation and forget the
      // first charge; a failure that was not refunded needs a new job id instead.
      if (row.spent_usd > 0) throw bug(row.id, `cannot be requeued: its $${row.spent_usd} was not refunded`);
      move(row, 'pending', 'requeued', { reason }, () => ({ requestId: null, finishedAt: null }));
    }),
  };
}

function bug(id: string, what: string): Error {
  return new Error(`bug in mediabatch: job "${id}" ${what}`);
}
