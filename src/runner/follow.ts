import type { RequestStatus } from '../api/types.js';
import type { RunDeps } from './context.js';
import { downloadResult } from './download.js';
import type { SplitJoins } from './join-splits.js';
import { pollStatus, type FollowedJob } from './status.js';

/**
 * One look at a submitted job: ask its status once; when it is done, download the result;
 * when it failed, record why. Returns 'again' while it is still running and worth asking
 * later. A job left behind (stopped, unreachable, waited on too long) stays `submitted`: its
 * request id is in the ledger and the next run collects it.
 */
export async function pollOnce(
  deps: RunDeps,
  joins: SplitJoins,
  job: FollowedJob,
  requestId: string,
  giveUpAtMs: number,
  claim: (jobId: string) => Promise<(() => void) | undefined> = async () => () => undefined,
): Promise<'again' | 'ended'> {
  const status = await pollStatus(deps, job, requestId, giveUpAtMs);
  if (status === 'stopped' || status === 'unreachable') return 'ended';
  // Webhooks: a delivery may be collecting it, or have settled it, since the call was made.
  const release = await claim(job.id);
  if (release === undefined) return 'ended';
  try {
    return await settleStatus(deps, joins, job, requestId, status, giveUpAtMs);
  } finally {
    release();
  }
}

/**
 * What a job's status means for it, however it came: by a status call or by a webhook
 * delivery (runner/webhook-settle.ts). One code path, so polling and webhooks cannot drift apart.
 */
export async function settleStatus(
  deps: RunDeps,
  joins: SplitJoins,
  job: FollowedJob,
  requestId: string,
  status: RequestStatus,
  giveUpAtMs: number,
): Promise<'again' | 'ended'> {
  if (status.status === 'done') {
    await downloadResult(deps, joins, job, requestId, status.resultUrl, giveUpAtMs);
    return 'ended';
  }
  if (status.status === 'error') {
    await recordRemoteError(deps, job, status);
    return 'ended';
  }
  if (deps.clock.nowMs() >= giveUpAtMs) {
    // Seen running: whatever an earlier run noted about it (status unknown) is no longer true.
    await deps.ledger.noteStillRunning(job.id);
    deps.emit({ kind: 'still_running', id: job.id });
    return 'ended';
  }
  return 'again';
}

async function recordRemoteError(deps: RunDeps, job: FollowedJob, status: RequestStatus): Promise<void> {
  const parts = [status.errorCode, status.errorMessage, status.errorReason].filter((p) => p !== undefined && p !== '');
  const reason = parts.length > 0 ? parts.join(': ') : 'the service ended the job in error';
  const retryable = status.retryable === true;
  const refunded = status.refunded === true;
  await deps.ledger.markFailedRemote(job.id, { reason, retryable, refunded });
  const suffix = retryable && refunded ? ' (retryable and refunded: sent again while --retries allows, else by the next run)' : '';
  deps.emit({ kind: 'failed', id: job.id, reason: reason + suffix });
}
