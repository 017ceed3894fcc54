import { AuthError, NotFoundError, RateLimitError, UnreachableError } from '../api/errors.js';
import { withRetries } from '../api/retry.js';
import type { RequestStatus } from '../api/types.js';
import type { RunDeps } from './context.js';
import type { FollowRow } from '../store/index.js';
import type { SendableJob } from '../jobs/index.js';
import { describeError, FatalRunError, idempotentRetries } from './run-errors.js';

// A status call in a module of its own: follow.ts (what a status means) and download.ts (a fresh
// URL for an expired result) both make one, and follow.ts downloads, so in either it would be a cycle.

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

/**
 * The job's status through the shared pace. A 429 pauses the whole status class for as long as
 * the service asks (a daily limit: until its reset) and the call is made again once it is
 * over, as a submit is requeued; only a job past its give-up time is left for the next run.
 */
export async function pollStatus(
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
