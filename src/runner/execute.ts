import type { Completion } from './completion.js';
import type { RunDeps } from './context.js';
import { FollowQueue } from './follow-queue.js';
import { jobFromRow } from './ingest.js';
import type { RunPlan } from './plan.js';
import { LocalIoError } from '../errors.js';
import type { JobRow, ReservableState, SendSelection } from '../store/index.js';
import { FatalRunError } from './run-errors.js';
import { submitJob } from './submit.js';
import { jobWindows } from './windows.js';

export interface ExecuteResult {
  /** A fatal error (auth, balance, disk) that ended the run early. */
  fatal?: FatalRunError | undefined;
  /** A daily limit stopped submitting under --no-wait: when to run again. */
  dailyLimitUntilMs?: number | undefined;
  stoppedBySignal: boolean;
}

const LEFT_OUT = 'over budget (--partial)';

/**
 * Carries out a plan: submits with bounded concurrency, follows every submitted job (those of
 * earlier runs too) and downloads results. Jobs to send and jobs to follow are read from the
 * ledger a window at a time, so a million jobs cost no more memory than a hundred. Every
 * outcome is committed to the ledger as it happens, so this can be stopped at any point and the
 * next run picks up from the ledger.
 */
export async function executePlan(
  deps: RunDeps,
  completion: Completion,
  plan: RunPlan,
  send: SendSelection,
  control: { userStop: AbortSignal; halt: AbortController },
): Promise<ExecuteResult> {
  const result: ExecuteResult = { stoppedBySignal: false };
  const guard = (work: Promise<unknown>): Promise<void> => guardFatal(result, control.halt, work);
  if (plan.skip > 0) {
    const left = await deps.ledger.skipAfter(plan.send.through?.index ?? Number.MIN_SAFE_INTEGER, send, LEFT_OUT);
    deps.emit({ kind: 'left_out', count: left.leftOut, skipped: left.skipped, reason: LEFT_OUT });
  }
  // A failure the event log records after this happened in this run: what --retries sends again.
  const failedAfter = await deps.ledger.lastEventId();

  const followers = deps.options.noWait ? undefined : new FollowQueue(deps, completion);
  // With webhooks, a job a delivery settles leaves the queue; its collection is waited for below.
  if (followers !== undefined) completion.attach({ forget: (id) => followers.forget(id), fatal: (error) => void guard(Promise.reject(error)).catch(() => undefined) });
  const following = followers === undefined ? Promise.resolve() : guard(followers.run(deps.options.concurrency * 2));

  const sending: Sending = { deps, completion, result, followers, guard, halt: control.halt, recordings: new Set() };
  Object.assign(deps.progress.toSend, plan.send.byType);
  if (plan.send.jobs > 0) {
    const through = plan.send.all ? undefined : plan.send.through?.index;
    await sendRows(sending, jobWindows(deps.ledger, { scope: 'manifest', send, through }), true);
  }
  if (followers !== undefined) {
    const idle = async (): Promise<void> => {
      await followers.idle();
      await guard(completion.drained());
    };
    await retryFailed(sending, send, failedAfter, idle);
  }
  followers?.close();
  await following;
  await followers?.drained();
  await guard(completion.drained());
  result.stoppedBySignal = control.userStop.aborted;
  return result;
}

/** What the submits of one execution share. */
interface Sending {
  deps: RunDeps;
  completion: Completion;
  result: ExecuteResult;
  followers: FollowQueue | undefined;
  guard: (work: Promise<unknown>) => Promise<void>;
  halt: AbortController;
  /** Each guarded as soon as it exists: a ledger that fails to record a request id must stop the run now. */
  recordings: Set<Promise<void>>;
}

/**
 * Submits rows read from the ledger with bounded concurrency; resolves once every request id of
 * them is committed, since following starts from those. `planned`: the plan's count of submits
 * still to send holds the rows already; a retry pass's are added as they are taken.
 */
async function sendRows(sending: Sending, rows: AsyncIterator<JobRow>, planned: boolean): Promise<void> {
  const { deps, guard } = sending;
  const { toSend } = deps.progress;
  await sharedBounded(rows, deps.options.concurrency, deps.stop, (row) => {
    if (!planned) toSend[row.type] = (toSend[row.type] ?? 0) + 1;
    return guard(submitWithRequeue(sending, row)).finally(() => (toSend[row.type] = (toSend[row.type] ?? 1) - 1));
  });
  await Promise.all(sending.recordings);
}

/**
 * `run --retries N`: once everything sent so far has settled, the jobs that failed at the
 * service during this run, retryable and refunded, are sent again, each once a pass, at most N
 * passes. Each pass reads them from the ledger in windows (those that failed after the pass
 * before began), so nothing is held but the window being sent.
 */
async function retryFailed(sending: Sending, send: SendSelection, after: number, idle: () => Promise<void>) {
  const { deps, result } = sending;
  let failedAfter = after;
  const passes = deps.options.retryFailed;
  for (let n = 1; n <= passes; n += 1) {
    await idle();
    if (deps.stop.aborted || result.fatal !== undefined || result.dailyLimitUntilMs !== undefined) return;
    const startedAfter = await deps.ledger.lastEventId();
    // Without --redo: a job it named that failed for good once more is not paid for again.
    const query = { scope: 'manifest' as const, send: { ...send, redo: [] }, failedAfter };
    const jobs = await deps.ledger.countJobs(query);
    if (jobs === 0) return;
    deps.emit({ kind: 'retry_pass', pass: n, passes, jobs });
    await deps.ledger.recordEvent(null, 'retry_pass', { pass: n, passes, jobs });
    await sendRows(sending, jobWindows(deps.ledger, query), false);
    failedAfter = startedAfter;
  }
}

/**
 * Submits one job read from the ledger. A job the service provably did not take because of a
 * rate limit goes back in line (the pace is paused meanwhile); a daily limit under --no-wait
 * stops submitting instead and says when to come back.
 */
async function submitWithRequeue(sending: Sending, row: JobRow): Promise<void> {
  const { deps, result } = sending;
  const job = jobFromRow(row);
  // Sent from the state it was read in (the selection read a failure for good only when --redo
  // named it); a job that came back as not taken is pending from then on.
  let from: readonly ReservableState[] = row.state === 'failed' ? ['failed', 'failed_for_good'] : [row.state as ReservableState];
  for (;;) {
    if (deps.stop.aborted || result.dailyLimitUntilMs !== undefined) return;
    const outcome = await submitJob(deps, sending.completion, job, from);
    from = ['pending'];
    switch (outcome.kind) {
      case 'submitted':
        track(
          sending,
          outcome.recorded.then((recorded) => {
            if (recorded !== 'submitted') {
              const reason = `the service answered request id ${outcome.requestId}, already given to job "${recorded.conflictWith}"`;
              deps.emit({ kind: 'in_doubt', id: job.id, reason });
              return;
            }
            deps.emit({ kind: 'submitted', id: job.id, requestId: outcome.requestId });
            sending.followers?.notify();
          }),
        );
        return;
      case 'not-taken':
        deps.emit({ kind: 'not_taken', id: job.id, reason: outcome.reason });
        if (outcome.daily && deps.options.noWait) {
          result.dailyLimitUntilMs = deps.clock.nowMs() + (outcome.retryAfterMs ?? 0);
          // Submits waiting to be retried (after a 503) would otherwise wait for the reset in the
          // paused class: with nothing to follow under --no-wait, the whole run stops here.
          sending.halt.abort(new Error('the daily limit is reached (--no-wait)'));
          return;
        }
        if (outcome.retryAfterMs === undefined) return;
        continue;
      case 'refused':
        deps.emit({ kind: 'failed', id: job.id, reason: outcome.reason });
        return;
      case 'in-doubt':
        deps.emit({ kind: 'in_doubt', id: job.id, reason: outcome.reason });
        return;
      case 'over-budget':
        await deps.ledger.markSkipped(job.id, 'the budget was reached during the run');
        deps.emit({ kind: 'skipped', id: job.id, reason: 'the budget was reached during the run' });
        return;
      case 'stopped':
        return;
    }
  }
}

function track(sending: Sending, recording: Promise<unknown>): void {
  const guarded = sending.guard(recording).finally(() => sending.recordings.delete(guarded));
  sending.recordings.add(guarded);
}

/** `work` on the items in order, `concurrency` at a time, each worker taking the next when free: none queued ahead. */
async function sharedBounded<T>(items: AsyncIterator<T>, concurrency: number, stop: AbortSignal, work: (item: T) => Promise<void>): Promise<void> {
  const worker = async (): Promise<void> => {
    while (!stop.aborted) {
      const next = await items.next();
      if (next.done === true) return;
      await work(next.value);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    await items.return?.();
  }
}

/** A fatal error in one worker stops the others (through `halt`); the first one is kept to report. */
async function guardFatal(result: ExecuteResult, halt: AbortController, work: Promise<unknown>): Promise<void> {
  try {
    await work;
  } catch (error) {
    const fatal = error instanceof LocalIoError ? new FatalRunError(error) : error;
    if (!(fatal instanceof FatalRunError)) throw error;
    result.fatal ??= fatal;
    halt.abort(fatal);
  }
}
