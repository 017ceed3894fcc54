import type { RawJob, StoreContext, Sync } from './context.js';
import type { ReservableState, ReserveResult, TransitionLedger } from '../ledger.js';
import { assertTransition, type JobState } from '../../jobs/states.js';
import { withinBudget, type MicroUsd } from '../../money.js';

/** The columns a state change may write; everything else about a job is written by the ingest (ingest.ts). */
const PROGRESS = [
  'state', 'request_id', 'attempts', 'spent_micro', 'carried_micro', 'last_error', 'retryable', 'refunded',
  'follow_seq', 'result_path', 'result_bytes', 'result_sha256', 'submitted_at', 'finished_at',
] as const satisfies readonly (keyof RawJob)[];
type JobProgress = Pick<RawJob, (typeof PROGRESS)[number]>;

/**
 * Every state change of a job. Each runs in one transaction that checks the current state,
 * writes the row and appends its event, so the log and the rows can never disagree. What each
 * promises is written on the Ledger interface (../ledger.ts).
 */
export function createTransitions(ctx: StoreContext): Sync<TransitionLedger> {
  const { db } = ctx;
  const selectJob = db.prepare<[string], RawJob>('SELECT * FROM jobs WHERE id = ?');
  const progressSql = PROGRESS.map((column) => `${column} = @${column}`).join(', ');
  const updateProgress = db.prepare(`UPDATE jobs SET ${progressSql}, updated_at = @now WHERE id = @id AND state = @from`);
  const selectRequestHolder = db.prepare<[string, string], { id: string }>('SELECT id FROM jobs WHERE request_id = ? AND id <> ? LIMIT 1');
  const submitting = "SELECT * FROM jobs WHERE state = 'submitting' ORDER BY manifest_index";
  const selectSubmitting = db.prepare<[], RawJob>(submitting);
  // The inputs' results as they are sent: an input generated again later makes this job "changed".
  const recordInputsSent = db.prepare(
    `UPDATE job_inputs SET sent_sha256 = (SELECT result_sha256 FROM jobs WHERE jobs.id = job_inputs.from_id)
     WHERE job_id = ?`,
  );
  const nextFollowSeq = db.prepare<[], { value: number }>("UPDATE counters SET value = value + 1 WHERE name = 'follow' RETURNING value");

  const load = (id: string, action: string): RawJob => {
    const row = selectJob.get(id);
    if (row === undefined) throw bug(id, `is not in the ledger (${action})`);
    return row;
  };
  /** Writes the row's progress with `change` only if it is still in its state; `why` ends the message if not. */
  const write = (row: RawJob, change: Partial<JobProgress>, now: string, why: string): JobProgress => {
    const next: JobProgress = { ...row, ...change };
    if (updateProgress.run({ ...next, id: row.id, from: row.state, now }).changes !== 1) {
      throw bug(row.id, `changed state under us (${why})`);
    }
    return next;
  };
  /** A job becomes submitted, or done or failed, at the moment of its move: the row is stamped with it. */
  const move = (row: RawJob, to: JobState, kind: string, detail: object, change: Partial<JobProgress>): void => {
    assertTransition(row.id, row.state, to);
    const now = ctx.nowIso();
    const ended = to === 'done' || to === 'failed';
    const stamps = to === 'submitted' ? { submitted_at: now } : ended ? { finished_at: now } : {};
    const next = write(row, { ...change, ...stamps, state: to }, now, `was ${row.state}`);
    ctx.insertEvent(row.id, kind, row.state, to, { ...detail, spentMicro: next.spent_micro }, now);
  };
  /** Builds a transactional method: load the row, which must be in one of `from`, then move it. */
  const step = <A extends unknown[], R = void>(
    action: string,
    from: readonly JobState[],
    body: (row: RawJob, ...args: A) => R,
  ): ((id: string, ...args: A) => R) =>
    db.transaction((id: string, ...args: A) => {
      const row = load(id, action);
      const only = `only from ${from.join(', ')}`;
      if (!from.includes(row.state)) throw bug(id, `cannot be ${action} from ${row.state} (${only})`);
      return body(row, ...args);
    });

  // A note on a paid job still `submitted` after a run asked about it (see CollectIssue): the
  // reason is the row's last_error, the kind the note's event.
  const note = db.transaction((id: string, kind: string, lastError: string | null, detail: object): void => {
    const row = load(id, kind);
    // Only a job with a request id, whose result is still to come, can be left uncollected.
    if (row.state !== 'submitted') throw bug(id, `is ${row.state}, not submitted (${kind})`);
    const now = ctx.nowIso();
    write(row, { last_error: lastError }, now, kind);
    ctx.insertEvent(id, kind, row.state, row.state, detail, now);
  });

  const reserve = db.transaction(
    (id: string, budgetMicro: MicroUsd | null, allowFrom: readonly ReservableState[]): ReserveResult => {
      const row = load(id, 'reserve');
      // A failure is sent again by itself only when the service said trying again may work and
      // charged nothing; any other only on purpose (run --redo).
      const from = row.state === 'failed' && !(row.retryable === 1 && row.refunded === 1) ? 'failed_for_good' : row.state;
      if (!(allowFrom as readonly string[]).includes(from)) return 'wrong-state';
      const priceMicro = row.price_micro;
      if (priceMicro === null) throw bug(id, 'has no price; prices are set before anything is reserved');
      // What this row already counts (an in-doubt attempt that may have been charged, a done
      // one that was) stays counted: sending it again may pay twice, and the budget must see both.
      const carriedMicro = row.spent_micro;
      const spentBeforeMicro = ctx.spentTotalMicro();
      if (!withinBudget(spentBeforeMicro, priceMicro, budgetMicro)) return 'over-budget';
      const spentTotalMicro = spentBeforeMicro + priceMicro;
      // A done job generated again (run --redo) keeps its result on the row until the new one is
      // in; the event names it, so the log keeps every result the job ever had.
      const earlier = row.state === 'done' ? { earlierResult: { path: row.result_path, sha256: row.result_sha256 } } : {};
      move(row, 'submitting', 'reserved', { priceMicro, carriedMicro, budgetMicro, spentTotalMicro, ...earlier }, {
        spent_micro: carriedMicro + priceMicro,
        carried_micro: carriedMicro,
        attempts: row.attempts + 1,
        request_id: null,
        last_error: null,
        retryable: null,
        refunded: null,
        submitted_at: null,
      });
      recordInputsSent.run(id);
      return 'reserved';
    },
  );

  return {
    recoverInterrupted: () => {
      const rows = selectSubmitting.all();
      const reason = 'crashed while submitting';
      const change = { last_error: `${reason}: the service may have taken it` };
      for (const row of rows) move(row, 'in_doubt', 'recovered', { reason }, change);
      return rows.map((row) => row.id);
    },
    // IMMEDIATE takes the write lock before reading the total, so a second process cannot
    // reserve between our read and our write and push the ledger past the budget.
    reserveForSubmit: (id, budgetMicro, allowFrom) => reserve.immediate(id, budgetMicro, allowFrom),
    markSubmitted: step('submitted', ['submitting'], (row, requestId) => {
      const holder = selectRequestHolder.get(requestId, row.id);
      if (holder !== undefined) {
        const reason = `the service answered request id ${requestId}, which it had already given to job "${holder.id}": whether it took this job cannot be known`;
        move(row, 'in_doubt', 'request_id_conflict', { requestId, heldBy: holder.id }, { last_error: reason });
        return { conflictWith: holder.id };
      }
      const followSeq = nextFollowSeq.get()?.value ?? null;
      move(row, 'submitted', 'submitted', { requestId }, { request_id: requestId, follow_seq: followSeq });
      return 'submitted';
    }),
    markNotTaken: step('released as not taken', ['submitting'], (row, reason) =>
      move(row, 'pending', 'not_taken', { reason }, { spent_micro: row.carried_micro, last_error: reason }),
    ),
    markRefused: step('refused', ['submitting'], (row, reason) =>
      move(row, 'failed', 'refused', { reason }, { spent_micro: row.carried_micro, last_error: reason }),
    ),
    markInDoubt: step('put in doubt', ['submitting'], (row, reason) =>
      move(row, 'in_doubt', 'in_doubt', { reason }, { last_error: reason }),
    ),
    markDone: step('done', ['submitted'], (row, result) =>
      move(row, 'done', 'done', { ...result }, {
        result_path: result.path,
        result_bytes: result.bytes,
        result_sha256: result.sha256,
        last_error: null,
      }),
    ),
    markFailedRemote: step('failed remotely', ['submitted'], (row, failure) => {
      // A refund covers this attempt; what earlier in-doubt attempts may have cost stays counted.
      move(row, 'failed', 'failed', { ...failure }, {
        spent_micro: failure.refunded ? row.carried_micro : row.spent_micro,
        last_error: failure.reason,
        retryable: failure.retryable ? 1 : 0,
        refunded: failure.refunded ? 1 : 0,
      });
    }),
    // Failed and done jobs come here from a run that meant to send them again (--retries, --redo)
    // and met the budget: they stay as they are, as in_doubt ones do.
    markSkipped: step('skipped', ['pending', 'skipped', 'in_doubt', 'failed', 'done'], (row, reason) => {
      if (row.state !== 'pending') return ctx.insertEvent(row.id, 'not_sent', row.state, row.state, { reason });
      move(row, 'skipped', 'skipped', { reason }, { last_error: reason });
    }),
    noteUncollected: (id, issue, reason) => note(id, issue, reason, { reason }),
    noteStillRunning: (id) => note(id, 'still_running', null, {}),
    recordEvent: (jobId, kind, detail) => ctx.insertEvent(jobId, kind, null, null, detail),
  };
}

function bug(id: string, what: string): Error {
  return new Error(`bug in mediabatch: job "${id}" ${what}`);
}
