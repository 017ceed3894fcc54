import { AuthError, RateLimitError } from '../api/errors.js';
import { withRetries } from '../api/retry.js';
import type { RequestStatus } from '../api/types.js';
import type { ResolvedJob } from '../manifest/types.js';
import type { RunContext } from './context.js';
import { downloadResult } from './download.js';
import { sleep } from './pace.js';
import { describeError, FatalRunError } from './run-errors.js';

export type FollowOutcome = 'done' | 'failed' | 'resubmittable' | 'still-running' | 'stopped' | 'unreachable';

/**
 * Polls one submitted job until it ends, then downloads its result. Polls back off per type
 * and share the status pace, so thousands of jobs in flight cost no more calls than the plan
 * allows. A job left waiting stays `submitted`: its request id is in the ledger and the next
 * run collects it.
 */
export async function followJob(ctx: RunContext, job: ResolvedJob, requestId: string): Promise<FollowOutcome> {
  const schedule = ctx.options.poll[job.type];
  const giveUpAt = Date.now() + schedule.giveUpMs;
  let delayMs = schedule.firstMs;
  for (;;) {
    try {
      await sleep(delayMs, ctx.stop);
    } catch {
      return 'stopped';
    }
    const status = await pollStatus(ctx, job, requestId);
    if (status === 'stopped' || status === 'unreachable') return status;
    if (status.status === 'done') return finishDone(ctx, job, requestId, status);
    if (status.status === 'error') return await recordRemoteError(ctx, job, status);
    if (Date.now() >= giveUpAt) {
      ctx.emit({ kind: 'still_running', id: job.id });
      return 'still-running';
    }
    delayMs = Math.min(delayMs * schedule.factor, schedule.maxMs);
  }
}

/** One status call through the shared pace; idempotent, so retried freely. */
export async function pollStatus(
  ctx: RunContext,
  job: ResolvedJob,
  requestId: string,
): Promise<RequestStatus | 'stopped' | 'unreachable'> {
  const { retry } = ctx.options;
  try {
    return await withRetries(
      async () => {
        await ctx.pace.take('status', ctx.stop);
        const answer = await ctx.client.requestStatus(requestId, { signal: ctx.stop });
        ctx.pace.observe('status', answer.rateLimit);
        return answer.value;
      },
      {
        kind: 'idempotent',
        retries: retry.retries,
        minDelayMs: retry.minDelayMs,
        maxDelayMs: retry.maxDelayMs,
        signal: ctx.stop,
        onRetry: (error, attempt, delayMs) => {
          if (error instanceof RateLimitError) {
            ctx.pace.pause('status', Date.now() + (error.retryAfterMs ?? 60_000), 'rate limited (429)');
          }
          ctx.emit({ kind: 'retry', what: `status of ${job.id}`, attempt, delayMs, reason: describeError(error) });
        },
      },
    );
  } catch (error) {
    if (ctx.stop.aborted) return 'stopped';
    if (error instanceof AuthError) throw new FatalRunError(error);
    // The request id is safe in the ledger; the next run asks again.
    ctx.ledger.recordEvent(job.id, 'status_unreachable', { error: describeError(error) });
    ctx.emit({ kind: 'warning', message: `job "${job.id}": could not read its status (${describeError(error)}); the next run asks again` });
    return 'unreachable';
  }
}

async function finishDone(
  ctx: RunContext,
  job: ResolvedJob,
  requestId: string,
  status: RequestStatus,
): Promise<FollowOutcome> {
  const outcome = await downloadResult(ctx, job, requestId, status.resultUrl);
  return outcome === 'done' ? 'done' : outcome === 'stopped' ? 'stopped' : 'unreachable';
}

async function recordRemoteError(ctx: RunContext, job: ResolvedJob, status: RequestStatus): Promise<FollowOutcome> {
  const parts = [status.errorCode, status.errorMessage, status.errorReason].filter((p) => p !== undefined && p !== '');
  const reason = parts.length > 0 ? parts.join(': ') : 'the service ended the job in error';
  const retryable = status.retryable === true;
  const refunded = status.refunded === true;
  await ctx.commits.run((l) => l.markFailedRemote(job.id, { reason, retryable, refunded }));
  const suffix = retryable && refunded ? ' (retryable and refunded: the next run sends it again)' : '';
  ctx.emit({ kind: 'failed', id: job.id, reason: reason + suffix });
  return retryable && refunded ? 'resubmittable' : 'failed';
}
