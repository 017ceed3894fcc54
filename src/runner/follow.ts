/**
 * Following a submitted job to its end: the `Completion` a run chooses (polling here, webhooks in
 * runner/webhooks.ts), the status call, and what a status means for the job, however it came.
 */
import { AuthError, NotFoundError, RateLimitError, UnreachableError } from '../api/errors.js';
import { withRetries } from '../api/retry.js';
import type { RequestStatus, ServiceRequest } from '../api/types.js';
import { kindOf, type JobType, type SendableJob } from '../jobs/index.js';
import type { FollowRow } from '../store/index.js';
import type { PollSchedules, RunDeps } from './context.js';
import { leaveUncollected, saveResult } from './download.js';
import type { Downstream } from './downstream.js';
import { describeError, FatalRunError, idempotentRetries } from './run-errors.js';

const MAX_URL_REFRESHES = 3;

/**
 * What following a sent job and saving its result need: its id, its kind, and the parameters
 * that name its result file (a speech job's `format`). The ledger row alone supplies them, so a
 * job removed from the manifest after it was sent (paid for) is still followed and collected.
 */
export type FollowedJob = Pick<SendableJob, 'id' | 'type' | 'params'>;

/** From the ledger's row: what was actually sent, even if the manifest changed since. */
export function followedFromRow(row: Pick<FollowRow, 'id' | 'type' | 'paramsJson'>): FollowedJob {
  return { id: row.id, type: row.type, params: JSON.parse(row.paramsJson) as Record<string, unknown> };
}

/** What execute gives the completion once its follow queue exists. */
export interface FollowHooks {
  /** The job was settled outside the queue (a webhook delivery): the queue drops it without a call. */
  forget(jobId: string): void;
  /** An error that ends the run (disk, auth) met outside the queue. */
  fatal(error: unknown): void;
}

/**
 * How a submitted job is followed to its end, chosen once by `run()`: by polling alone, or by
 * the service's webhooks with polling as the safety net. The follow queue, submit and execute
 * call it the same way whichever it is.
 */
export interface Completion {
  readonly schedules: PollSchedules;
  /** The generation request as sent: webhooks add their URL and this run's secret. */
  request(request: ServiceRequest): ServiceRequest;
  /** The service took the job; called in markSubmitted's turn, so a write shares its commit. */
  sent(jobId: string): void;
  /** One look at a job the follow queue holds: 'again' while it runs and is worth asking later. */
  poll(job: FollowedJob, requestId: string, giveUpAtMs: number): Promise<'again' | 'ended'>;
  /** When a job an earlier run sent is first asked about; undefined: its schedule's first poll. */
  earlierFirstPollMs(type: JobType): number | undefined;
  attach(hooks: FollowHooks): void;
  /** Resolves once nothing is being collected outside the follow queue; rejects with an error that ended it. */
  drained(): Promise<void>;
  /** Ends what the completion started (a receiver), once the run is over. */
  close(): Promise<void>;
}

/** Every job is followed by status calls on `schedules`. */
export function pollingCompletion(deps: RunDeps, downstream: Downstream, schedules: PollSchedules): Completion {
  return {
    schedules,
    request: (request) => request,
    sent: () => undefined,
    poll: (job, requestId, giveUpAtMs) => pollOnce(deps, downstream, job, requestId, giveUpAtMs),
    earlierFirstPollMs: () => undefined,
    attach: () => undefined,
    drained: async () => undefined,
    close: async () => undefined,
  };
}

/**
 * One look at a submitted job: ask its status once, then settle it. A job left behind (stopped,
 * unreachable, waited on too long) stays `submitted`: its request id is in the ledger and the
 * next run collects it. `claim` (webhooks) holds the job while it is settled.
 */
export async function pollOnce(
  deps: RunDeps,
  downstream: Downstream,
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
    return await settleStatus(deps, downstream, job, requestId, status, giveUpAtMs);
  } finally {
    release();
  }
}

/**
 * What a job's status means for it, however it came: by a status call or by a webhook
 * delivery (runner/webhooks.ts). One code path, so polling and webhooks cannot drift apart.
 */
export async function settleStatus(
  deps: RunDeps,
  downstream: Downstream,
  job: FollowedJob,
  requestId: string,
  status: RequestStatus,
  giveUpAtMs: number,
): Promise<'again' | 'ended'> {
  if (status.status === 'done') {
    await collect(deps, downstream, job, requestId, status, giveUpAtMs);
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

/**
 * Saves a done job's result: the text or embedding the status carries, else the file behind its
 * URL; an expired URL (403) is refreshed through the status endpoint.
 */
async function collect(
  deps: RunDeps,
  downstream: Downstream,
  job: FollowedJob,
  requestId: string,
  done: Pick<RequestStatus, 'resultUrl' | 'result'>,
  giveUpAtMs: number,
): Promise<void> {
  // A file kind's `result` is no result of ours (the service's document gives a URL there).
  const textual = ['text', 'embedding'].includes(kindOf(job.type).output.media);
  let found = done;
  for (let refresh = 0; refresh <= MAX_URL_REFRESHES; refresh += 1) {
    if (textual && found.result !== undefined) {
      await saveResult(deps, downstream, job, { inline: found.result });
      return;
    }
    if (found.resultUrl === undefined || found.resultUrl === '') {
      const status = await pollStatus(deps, job, requestId, giveUpAtMs);
      if (status === 'stopped' || status === 'unreachable') return;
      found = status;
      if (textual && found.result !== undefined) continue;
      if (found.resultUrl === undefined || found.resultUrl === '') {
        return leaveUncollected(deps, job, 'the service reported done without a result_url');
      }
    }
    if ((await saveResult(deps, downstream, job, { url: found.resultUrl })) !== 'expired') return;
    found = {};
  }
  await leaveUncollected(deps, job, `the result URL expired ${MAX_URL_REFRESHES + 1} times in a row`);
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

/**
 * The job's status through the shared pace. A 429 pauses the whole status class for as long as
 * the service asks (a daily limit: until its reset) and the call is made again once it is
 * over, as a submit is requeued; only a job past its give-up time is left for the next run.
 */
async function pollStatus(
  deps: RunDeps,
  job: FollowedJob,
  requestId: string,
  giveUpAtMs: number,
): Promise<RequestStatus | 'stopped' | 'unreachable'> {
  for (;;) {
    try {
      return await askStatus(deps, job, requestId);
    } catch (error) {
      if (deps.stop.aborted) return 'stopped';
      if (error instanceof AuthError) throw new FatalRunError(error);
      if (error instanceof NotFoundError) return leaveUnasked(deps, job, `the service does not know request ${requestId} (404)`);
      if (error instanceof UnreachableError) {
        // The job stays submitted (the next run asks again); the run ends, saying why (exit 4).
        await leaveUnasked(deps, job, `could not read it: ${describeError(error)}`);
        throw new FatalRunError(error);
      }
      if (!(error instanceof RateLimitError)) return leaveUnasked(deps, job, `could not read it: ${describeError(error)}`);
      // The retry layer leaves waits longer than its own to the pace, which holds every worker.
      deps.pace.rateLimited('status', error);
      if (deps.clock.nowMs() < giveUpAtMs) continue;
      const untilIso = new Date(deps.pace.pausedUntil('status')).toISOString();
      return leaveUnasked(deps, job, `status calls are paused until ${untilIso} (${describeError(error)})`);
    }
  }
}

/** One status call, idempotent, so retried freely; short waits a 429 asks for are waited here. */
async function askStatus(deps: RunDeps, job: FollowedJob, requestId: string): Promise<RequestStatus> {
  return withRetries(
    async () => {
      await deps.pace.take('status', deps.stop);
      const answer = await deps.client.requestStatus(requestId, { signal: deps.stop });
      deps.pace.observe('status', answer.rateLimit);
      return answer.value;
    },
    idempotentRetries({ ...deps, retry: deps.options.retry }, `status of ${job.id}`, 'status'),
  );
}

/**
 * The job stays `submitted` with its status unknown and why. Even a 404 keeps it: its request id
 * is the only handle on a result that may be paid for, and the next run asks again.
 */
async function leaveUnasked(deps: RunDeps, job: FollowedJob, reason: string): Promise<'unreachable'> {
  await deps.ledger.noteUncollected(job.id, 'status_unknown', reason);
  deps.emit({ kind: 'warning', message: `job "${job.id}": status unknown (${reason}); it stays submitted and the next run asks again` });
  return 'unreachable';
}
