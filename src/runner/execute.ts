import type { RunContext } from './context.js';
import { FollowQueue } from './follow-queue.js';
import { followedJob, type FollowedJob } from './followed.js';
import type { PlannedSubmit, RunPlan } from './plan.js';
import { LocalIoError } from '../errors.js';
import { FatalRunError } from './run-errors.js';
import { submitJob } from './submit.js';

export interface ExecuteResult {
  /** Set when a fatal error (auth, balance, disk) ended the run early. */
  fatal?: FatalRunError | undefined;
  /** Set when a daily limit stopped submitting under --no-wait: when to run again. */
  dailyLimitUntilMs?: number | undefined;
  stoppedBySignal: boolean;
}

/**
 * Carries out a plan: submits with bounded concurrency, follows every submitted job (those of
 * earlier runs too) and downloads results. Every outcome is committed to the ledger as it
 * happens, so this can be stopped at any point and the next run picks up from the ledger.
 */
export async function executePlan(
  ctx: RunContext,
  plan: RunPlan,
  control: { userStop: AbortSignal; halt: AbortController },
): Promise<ExecuteResult> {
  const result: ExecuteResult = { stoppedBySignal: false };
  const guard = (work: Promise<unknown>): Promise<void> => guardFatal(result, control.halt, work);
  await Promise.all(plan.skip.map((s) => ctx.ledger.markSkipped(s.job.id, 'over budget (--partial)')));
  for (const skipped of plan.skip) ctx.emit({ kind: 'skipped', id: skipped.job.id, reason: 'over budget (--partial)' });

  const followers = new FollowQueue(ctx);
  // With webhooks, a job a delivery settles leaves the queue; its collection is waited for below.
  ctx.webhooks?.attach({ forget: (id) => followers.forget(id), fatal: (error) => void guard(Promise.reject(error)).catch(() => undefined) });
  const following = ctx.options.noWait ? Promise.resolve() : guard(followers.run(ctx.options.concurrency * 2));
  const follow = (job: FollowedJob, requestId: string, firstMs?: number): void => {
    if (!ctx.options.noWait) followers.add(job, requestId, firstMs);
  };
  for (const earlier of plan.follow) follow(earlier.job, earlier.requestId, ctx.webhooks?.earlierFirstPollMs(earlier.job.type));

  // Each recording is guarded as soon as it exists: a ledger that fails to record a request id
  // must stop the run now, not surface as an unhandled rejection later.
  const recordings = new Set<Promise<void>>();
  const track = (recording: Promise<unknown>): void => {
    const guarded = guard(recording).finally(() => recordings.delete(guarded));
    recordings.add(guarded);
  };
  await inOrderBounded(plan.submit, ctx.options.concurrency, ctx.stop, (planned) =>
    guard(submitWithRequeue(ctx, planned, follow, result, track)),
  );
  // Request ids are committed before anything else is awaited: following starts from them.
  await Promise.all(recordings);
  followers.close();
  await following;
  await followers.drained();
  if (ctx.webhooks !== undefined) await guard(ctx.webhooks.drained());
  result.stoppedBySignal = control.userStop.aborted;
  return result;
}

/**
 * Submits one planned job. A job the service provably did not take because of a rate limit
 * goes back in line (the pace is paused meanwhile); a daily limit under --no-wait stops
 * submitting instead and says when to come back.
 */
async function submitWithRequeue(
  ctx: RunContext,
  planned: PlannedSubmit,
  follow: (job: FollowedJob, requestId: string) => void,
  result: ExecuteResult,
  track: (recording: Promise<unknown>) => void,
): Promise<void> {
  for (;;) {
    if (ctx.stop.aborted || result.dailyLimitUntilMs !== undefined) return;
    const outcome = await submitJob(ctx, planned.job, planned.reason === 'resubmit-in-doubt');
    switch (outcome.kind) {
      case 'submitted':
        track(
          outcome.recorded.then((recorded) => {
            if (recorded !== 'submitted') {
              const reason = `the service answered request id ${outcome.requestId}, already given to job "${recorded.conflictWith}"`;
              ctx.emit({ kind: 'in_doubt', id: planned.job.id, reason });
              return;
            }
            ctx.emit({ kind: 'submitted', id: planned.job.id, requestId: outcome.requestId });
            follow(followedJob(planned.job), outcome.requestId);
          }),
        );
        return;
      case 'not-taken':
        ctx.emit({ kind: 'not_taken', id: planned.job.id, reason: outcome.reason });
        if (outcome.daily && ctx.options.noWait) {
          result.dailyLimitUntilMs = Date.now() + (outcome.retryAfterMs ?? 0);
          return;
        }
        if (outcome.retryAfterMs === undefined) return;
        continue;
      case 'refused':
        ctx.emit({ kind: 'failed', id: planned.job.id, reason: outcome.reason });
        return;
      case 'in-doubt':
        ctx.emit({ kind: 'in_doubt', id: planned.job.id, reason: outcome.reason });
        return;
      case 'over-budget':
        await ctx.ledger.markSkipped(planned.job.id, 'the budget was reached during the run');
        ctx.emit({ kind: 'skipped', id: planned.job.id, reason: 'the budget was reached during the run' });
        return;
      case 'stopped':
        return;
    }
  }
}

/**
 * Runs `work` on the items in order, at most `concurrency` at a time, until `stop` aborts.
 * Each worker takes the next item when it is free, so nothing is queued ahead for 10,000 jobs.
 */
async function inOrderBounded<T>(
  items: readonly T[],
  concurrency: number,
  stop: AbortSignal,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let item = items[next++]; item !== undefined && !stop.aborted; item = items[next++]) await work(item);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
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
