import { AuthError, NotFoundError, RateLimitError, UnreachableError } from '../api/errors.js';
import { withRetries } from '../api/retry.js';
import type { RequestStatus } from '../api/types.js';
import type { RunContext } from './context.js';
import { downloadResult } from './download.js';
import type { FollowedJob } from './followed.js';
import { describeError, FatalRunError } from './run-errors.js';

/**
 * One look at a submitted job: ask its status once; when it is done, download the result;
 * when it failed, record why. Returns 'again' while it is still running and worth asking
 * later. A job left behind (stopped, unreachable, waited on too long) stays `submitted`: its
 * request id is in the ledger and the next run collects it.
 */
export async function pollOnce(
  ctx: RunContext,
  job: FollowedJob,
  requestId: string,
  giveUpAtMs: number,
): Promise<'again' | 'ended'> {
  // A delivery may have settled it, or be collecting it, since it was queued: no call for it.
  if (ctx.webhooks !== undefined && !(await ctx.webhooks.outstanding(job.id))) return 'ended';
  const status = await pollStatus(ctx, job, requestId, giveUpAtMs);
  if (status === 'stopped' || status === 'unreachable') return 'ended';
  const release = ctx.webhooks === undefined ? () => undefined : await ctx.webhooks.claim(job.id);
  if (release === undefined) return 'ended';
  try {
    return await settleStatus(ctx, job, requestId, status, giveUpAtMs);
  } finally {
    release();
  }
}

/**
 * What a job's status means for it, however it came: by a status call or by a webhook
 * delivery (runner/webhook-settle.ts). One code path, so polling and webhooks cannot drift apart.
 */
export async function settleStatus(
  ctx: RunContext,
  job: FollowedJob,
  requestId: string,
  status: RequestStatus,
  giveUpAtMs: number,
): Promise<'again' | 'ended'> {
  if (status.status === 'done') {
    await downloadResult(ctx, job, requestId, status.resultUrl, giveUpAtMs);
    return 'ended';
  }
  if (status.status === 'error') {
    await recordRemoteError(ctx, job, status);
    return 'ended';
  }
  if (ctx.clock.nowMs() >= giveUpAtMs) {
    // Seen running: whatever an earlier run noted about it (status unknown) is no longer true.
    await ctx.ledger.noteStillRunning(job.id);
    ctx.emit({ kind: 'still_running', id: job.id });
    return 'ended';
  }
  return 'again';
}

/**
 * The job's status through the shared pace. A 429 pauses the whole status class for as long as
 * the service asks (a daily limit: until its reset) and the call is made again once it is
 * over, as a submit is requeued; only a job past its give-up time is left for the next run.
 */
export async function pollStatus(
  ctx: RunContext,
  job: FollowedJob,
  requestId: string,
  giveUpAtMs: number,
): Promise<RequestStatus | 'stopped' | 'unreachable'> {
  for (;;) {
    try {
      return await askStatus(ctx, job, requestId);
    } catch (error) {
      if (ctx.stop.aborted) return 'stopped';
      if (error instanceof AuthError) throw new FatalRunError(error);
      if (error instanceof NotFoundError) return leaveUnasked(ctx, job, `the service does not know request ${requestId} (404)`);
      if (error instanceof UnreachableError) {
        // The job stays submitted (the next run asks again); the run ends, saying why (exit 4).
        await leaveUnasked(ctx, job, `could not read it: ${describeError(error)}`);
        throw new FatalRunError(error);
      }
      if (!(error instanceof RateLimitError)) return leaveUnasked(ctx, job, `could not read it: ${describeError(error)}`);
      // The retry layer leaves waits longer than its own to the pace, which holds every worker.
      ctx.pace.rateLimited('status', error);
      if (ctx.clock.nowMs() < giveUpAtMs) continue;
      const untilIso = new Date(ctx.pace.pausedUntil('status')).toISOString();
      return leaveUnasked(ctx, job, `status calls are paused until ${untilIso} (${describeError(error)})`);
    }
  }
}

/** One status call, idempotent, so retried freely; short waits a 429 asks for are waited here. */
async function askStatus(ctx: RunContext, job: FollowedJob, requestId: string): Promise<RequestStatus> {
  return withRetries(
    async () => {
      await ctx.pace.take('status', ctx.stop);
      const answer = await ctx.client.requestStatus(requestId, { signal: ctx.stop });
      ctx.pace.observe('status', answer.rateLimit);
      return answer.value;
    },
    {
      kind: 'idempotent',
      ...ctx.options.retry,
      signal: ctx.stop,
      onRetry: (error, attempt, delayMs) => {
        if (error instanceof RateLimitError) ctx.pace.rateLimited('status', error);
        ctx.emit({ kind: 'retry', what: `status of ${job.id}`, attempt, delayMs, reason: describeError(error) });
      },
    },
  );
}

/**
 * The job stays `submitted` with its status unknown and why. Even a 404 keeps it: its request id
 * is the only handle on a result that may be paid for, and the next run asks again.
 */
async function leaveUnasked(ctx: RunContext, job: FollowedJob, reason: string): Promise<'unreachable'> {
  await ctx.ledger.noteUncollected(job.id, 'status_unknown', reason);
  ctx.emit({ kind: 'warning', message: `job "${job.id}": status unknown (${reason}); it stays submitted and the next run asks again` });
  return 'unreachable';
}

async function recordRemoteError(ctx: RunContext, job: FollowedJob, status: RequestStatus): Promise<void> {
  const parts = [status.errorCode, status.errorMessage, status.errorReason].filter((p) => p !== undefined && p !== '');
  const reason = parts.length > 0 ? parts.join(': ') : 'the service ended the job in error';
  const retryable = status.retryable === true;
  const refunded = status.refunded === true;
  await ctx.ledger.markFailedRemote(job.id, { reason, retryable, refunded });
  const suffix = retryable && refunded ? ' (retryable and refunded: sent again while --retries allows, else by the next run)' : '';
  ctx.emit({ kind: 'failed', id: job.id, reason: reason + suffix });
}
