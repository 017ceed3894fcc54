import type { RequestStatus } from '../api/types.js';
import type { RunContext } from './context.js';
import { downloadResult } from './download.js';
import type { FollowedJob } from './followed.js';
import { pollStatus } from './status.js';

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

async function recordRemoteError(ctx: RunContext, job: FollowedJob, status: RequestStatus): Promise<void> {
  const parts = [status.errorCode, status.errorMessage, status.errorReason].filter((p) => p !== undefined && p !== '');
  const reason = parts.length > 0 ? parts.join(': ') : 'the service ended the job in error';
  const retryable = status.retryable === true;
  const refunded = status.refunded === true;
  await ctx.ledger.markFailedRemote(job.id, { reason, retryable, refunded });
  const suffix = retryable && refunded ? ' (retryable and refunded: sent again while --retries allows, else by the next run)' : '';
  ctx.emit({ kind: 'failed', id: job.id, reason: reason + suffix });
}
