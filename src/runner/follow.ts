import { AuthError, RateLimitError } from '../api/errors.js';
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
  const status = await pollStatus(ctx, job, requestId);
  if (status === 'stopped' || status === 'unreachable') return 'ended';
  if (status.status === 'done') {
    await downloadResult(ctx, job, requestId, status.resultUrl);
    return 'ended';
  }
  if (status.status === 'error') {
    await recordRemoteError(ctx, job, status);
    return 'ended';
  }
  if (Date.now() >= giveUpAtMs) {
    ctx.emit({ kind: 'still_running', id: job.id });
    return 'ended';
  }
  return 'again';
}

/** One status call through the shared pace; idempotent, so retried freely. */
export async function pollStatus(
  ctx: RunContext,
  job: FollowedJob,
  requestId: string,
): Promise<RequestStatus | 'stopped' | 'unreachable'> {
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
        ...ctx.options.retry,
        signal: ctx.stop,
        onRetry: (error, attempt, delayMs) => {
          if (error instanceof RateLimitError) ctx.pace.rateLimited('status', error);
          ctx.emit({ kind: 'retry', what: `status of ${job.id}`, attempt, delayMs, reason: describeError(error) });
        },
      },
    );
  } catch (error) {
    if (ctx.stop.aborted) return 'stopped';
    if (error instanceof AuthError) throw new FatalRunError(error);
    // The request id is safe in the ledger; the next run asks again.
    await ctx.writer.write('recordEvent', job.id, 'status_unreachable', { error: describeError(error) });
    ctx.emit({ kind: 'warning', message: `job "${job.id}": could not read its status (${describeError(error)}); the next run asks again` });
    return 'unreachable';
  }
}

async function recordRemoteError(ctx: RunContext, job: FollowedJob, status: RequestStatus): Promise<void> {
  const parts = [status.errorCode, status.errorMessage, status.errorReason].filter((p) => p !== undefined && p !== '');
  const reason = parts.length > 0 ? parts.join(': ') : 'the service ended the job in error';
  const retryable = status.retryable === true;
  const refunded = status.refunded === true;
  await ctx.writer.write('markFailedRemote', job.id, { reason, retryable, refunded });
  const suffix = retryable && refunded ? ' (retryable and refunded: the next run sends it again)' : '';
  ctx.emit({ kind: 'failed', id: job.id, reason: reason + suffix });
}
