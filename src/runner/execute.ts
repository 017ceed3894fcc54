import type { Completion } from './follow.js';
import type { RunDeps } from './context.js';
import { jobToSend, type DependentDeps } from './inputs.js';
import type { Downstream } from './downstream.js';
import { FollowQueue } from './follow-queue.js';
import { sendInLanes, type LaneOutcome } from './lanes.js';
import { jobFromRow } from './ingest.js';
import type { RunPlan } from './plan.js';
import { LocalIoError } from '../errors.js';
import { JOB_TYPES } from '../jobs/index.js';
import { submitClassOf } from '../jobs/plans.js';
import type { JobType } from '../jobs/types.js';
import type { JobQuery, JobRow, ReservableState, SendSelection } from '../store/index.js';
import { FatalRunError } from './run-errors.js';
import { submitJob } from './submit.js';
import { SendFeed } from './send-feed.js';

export interface ExecuteResult {
  /** Set when a fatal error (auth, balance, disk) ended the run early. */
  fatal?: FatalRunError | undefined;
  /** Set when a daily limit stopped submitting under --no-wait: when to run again. */
  dailyLimitUntilMs?: number | undefined;
  stoppedBySignal: boolean;
}

const LEFT_OUT = 'over budget (--partial)';
const SUBMIT_CLASSES = [...new Set(JOB_TYPES.map(submitClassOf))];

/**
 * Carries out a plan: submits with bounded concurrency, follows every submitted job (those of
 * earlier runs too) and downloads results. Jobs to send and jobs to follow are read from the
 * ledger a window at a time, so a million jobs cost no more memory than a hundred. Every
 * outcome is committed to the ledger as it happens, so this can be stopped at any point and the
 * next run picks up from the ledger.
 */
export async function executePlan(
  deps: RunDeps,
  followed: { completion: Completion; downstream: Downstream; dependents?: DependentDeps | undefined },
  plan: RunPlan,
  send: SendSelection,
  control: { userStop: AbortSignal; halt: AbortController },
): Promise<ExecuteResult> {
  const { completion } = followed;
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

  const sendJobs = submitter({ deps, result, followers, ...followed }, guard);
  Object.assign(deps.progress.toSend, plan.send.byType);
  if (plan.send.jobs > 0) {
    const types = JOB_TYPES.filter((type) => (plan.send.byType[type] ?? 0) > 0);
    await sendJobs({ scope: 'manifest', send, through: plan.send.all ? undefined : plan.send.through?.index }, types, true);
  }
  if (followers !== undefined) {
    const idle = async (): Promise<void> => {
      await followers.idle();
      await guard(completion.drained());
    };
    await retryFailed(deps, { send, failedAfter, result, idle, submit: (query, types) => sendJobs(query, types, false) });
  }
  followers?.close();
  await following;
  await followers?.drained();
  await guard(completion.drained());
  result.stoppedBySignal = control.userStop.aborted;
  return result;
}

interface Sending {
  deps: RunDeps;
  completion: Completion;
  result: ExecuteResult;
  followers: FollowQueue | undefined;
  downstream: Downstream;
  /** Some job takes another's result: lanes read jobs ready to send, and take those made ready. */
  dependents?: DependentDeps | undefined;
}

/** The jobs of a send: every lane reads its own class's jobs among them, in manifest order. */
type SendQuery = Omit<JobQuery, 'after' | 'limit' | 'types'>;

/**
 * Submits the jobs a query selects, each endpoint class in a lane of its own (runner/lanes.ts)
 * on the run's shared workers; resolves once every request id of them is committed,
 * since following starts from those. `types`: only the kinds that have jobs to send, since a
 * lane's first window would otherwise walk every row of the manifest for nothing. `planned`: the
 * plan's count of submits still to send holds the rows already; a retry pass's are added as
 * they are taken.
 */
function submitter(
  sending: Sending,
  guard: (work: Promise<unknown>) => Promise<void>,
): (query: SendQuery, types: readonly JobType[], planned: boolean) => Promise<void> {
  const { deps } = sending;
  const { toSend } = deps.progress;
  // Each recording is guarded as soon as it exists: a ledger that fails to record a request id
  // must stop the run now, not surface as an unhandled rejection later.
  const recordings = new Set<Promise<void>>();
  const track = (recording: Promise<unknown>): void => {
    const guarded = guard(recording).finally(() => recordings.delete(guarded));
    recordings.add(guarded);
  };
  const quiet = async (): Promise<void> => {
    await Promise.all(recordings);
    await sending.followers?.idle();
    await sending.completion.drained();
  };
  return async (query, types, planned) => {
    // A row that came back not taken is pending from then on, whatever state it was read in.
    const requeued = new Set<string>();
    const feed = new SendFeed({ quiet, stop: deps.stop, through: query.through });
    const ready = sending.dependents === undefined ? undefined : true;
    if (ready) sending.downstream.feed(feed);
    // One lane per endpoint class: kinds sharing a budget (the Whisper kinds) share a lane, in
    // manifest order. A class with none of `types` only takes the dependents that become ready.
    const lanes = SUBMIT_CLASSES.map((cls) => {
      const ofClass = types.filter((type) => submitClassOf(type) === cls);
      if (ofClass.length === 0) return feed.lane(cls);
      return feed.lane(cls, (after, limit) => deps.ledger.readJobs({ ...query, types: ofClass, ready, after, limit }));
    });
    await sendInLanes(lanes, {
      concurrency: deps.options.concurrency,
      stop: deps.stop,
      take: (cls, signal) => deps.pace.take(cls, signal),
      work: async (row, stop) => {
        const again = requeued.delete(row.id);
        // A dependent a retry pass makes ready was counted by the plan already.
        if (!planned && !again && row.state === 'failed') toSend[row.type] = (toSend[row.type] ?? 0) + 1;
        const from: readonly ReservableState[] = again ? ['pending'] : fromState(row);
        const submitted = submitRow(sending, row, { from, stop, track });
        // A fatal failure is the guard's (the run halts); the lane just goes on to see the stop.
        await guard(submitted);
        const outcome = await submitted.catch((): LaneOutcome => 'next');
        if (outcome === 'again') requeued.add(row.id);
        else toSend[row.type] = (toSend[row.type] ?? 1) - 1;
        return outcome;
      },
    });
    await Promise.all(recordings);
  };
}

/** Sent from the state it was read in: the selection read a failure for good only when --redo named it. */
function fromState(row: JobRow): readonly ReservableState[] {
  return row.state === 'failed' ? ['failed', 'failed_for_good'] : [row.state as ReservableState];
}

/**
 * `run --retries N`: once everything sent so far has settled, the jobs that failed at the
 * service during this run, retryable and refunded, are sent again, each once a pass, at most N
 * passes. Each pass reads them from the ledger in windows (those that failed after the pass
 * before began), so nothing is held but the window being sent.
 */
async function retryFailed(
  deps: RunDeps,
  pass: { send: SendSelection; failedAfter: number; result: ExecuteResult; idle: () => Promise<void>; submit: (query: SendQuery, types: readonly JobType[]) => Promise<void> },
): Promise<void> {
  const passes = deps.options.retryFailed;
  let failedAfter = pass.failedAfter;
  for (let n = 1; n <= passes; n += 1) {
    await pass.idle();
    if (deps.stop.aborted || pass.result.fatal !== undefined || pass.result.dailyLimitUntilMs !== undefined) return;
    const startedAfter = await deps.ledger.lastEventId();
    // Without --redo: a job it named that failed for good once more is not paid for again.
    const query = { scope: 'manifest' as const, send: { ...pass.send, redo: [] }, failedAfter };
    const byType = await Promise.all(JOB_TYPES.map(async (type) => [type, await deps.ledger.countJobs({ ...query, types: [type] })] as const));
    const jobs = byType.reduce((sum, [, n]) => sum + n, 0);
    if (jobs === 0) return;
    deps.emit({ kind: 'retry_pass', pass: n, passes, jobs });
    await deps.ledger.recordEvent(null, 'retry_pass', { pass: n, passes, jobs });
    await pass.submit(query, byType.filter(([, n]) => n > 0).map(([type]) => type));
    failedAfter = startedAfter;
  }
}

/**
 * Submits one job read from the ledger and says what its lane does next. A job the service
 * provably did not take because of a rate limit goes back to its lane (the class is paused
 * meanwhile); a daily limit under --no-wait closes the lane instead and says when to come back.
 */
async function submitRow(
  { deps, completion, result, followers, dependents }: Sending,
  row: JobRow,
  parts: { from: readonly ReservableState[]; stop: AbortSignal; track: (recording: Promise<unknown>) => void },
): Promise<LaneOutcome> {
  const ready = dependents === undefined ? { job: jobFromRow(row) } : await jobToSend(dependents, row);
  if ('blocked' in ready) {
    // Nothing is reserved or sent: a run after its input is generated again sends it.
    await deps.ledger.markSkipped(row.id, ready.blocked);
    deps.emit({ kind: 'skipped', id: row.id, reason: ready.blocked });
    return 'next';
  }
  const { job } = ready;
  const outcome = await submitJob(deps, completion, job, { from: parts.from, stop: parts.stop });
  switch (outcome.kind) {
    case 'submitted':
      parts.track(
        outcome.recorded.then((recorded) => {
          if (recorded !== 'submitted') {
            const reason = `the service answered request id ${outcome.requestId}, already given to job "${recorded.conflictWith}"`;
            deps.emit({ kind: 'in_doubt', id: job.id, reason });
            return;
          }
          deps.emit({ kind: 'submitted', id: job.id, requestId: outcome.requestId, priceMicro: row.priceMicro ?? undefined });
          followers?.notify();
        }),
      );
      return 'next';
    case 'not-taken':
      deps.emit({ kind: 'not_taken', id: job.id, reason: outcome.reason });
      if (outcome.daily && deps.options.noWait) {
        // Nothing to follow under --no-wait: this class waits for the next run, the others go on.
        result.dailyLimitUntilMs ??= deps.clock.nowMs() + (outcome.retryAfterMs ?? 0);
        return 'close';
      }
      return outcome.rateLimited || outcome.retryAfterMs !== undefined ? 'again' : 'next';
    case 'refused':
      deps.emit({ kind: 'failed', id: job.id, reason: outcome.reason });
      return 'next';
    case 'in-doubt':
      deps.emit({ kind: 'in_doubt', id: job.id, reason: outcome.reason });
      return 'next';
    case 'over-budget':
      await deps.ledger.markSkipped(job.id, 'the budget was reached during the run');
      deps.emit({ kind: 'skipped', id: job.id, reason: 'the budget was reached during the run' });
      return 'next';
    case 'stopped':
      return 'next';
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
