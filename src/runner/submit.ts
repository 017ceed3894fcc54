import { RateLimitError, submitFailureKind, UnreachableError } from '../api/errors.js';
import { withRetries } from '../api/retry.js';
import type { ServiceRequest } from '../api/types.js';
import { kindOf, type SendableJob } from '../jobs/index.js';
import type { ReservableState, SubmittedResult } from '../store/index.js';
import type { Completion } from './follow.js';
import type { RunDeps } from './context.js';
import { submitClassOf } from '../jobs/plans.js';
import type { PacedClass } from './pace.js';
import { describeError, FatalRunError, SubmitAbandoned } from './run-errors.js';

export type SubmitOutcome =
  | { kind: 'submitted'; requestId: string; recorded: Promise<SubmittedResult> }
  | { kind: 'not-taken'; reason: string; retryAfterMs?: number | undefined; rateLimited: boolean; daily: boolean }
  | { kind: 'refused' | 'in-doubt'; reason: string }
  | { kind: 'over-budget' }
  | { kind: 'stopped' };

/**
 * Sends one job, once the pace of its class allowed it (runner/lanes.ts), at most once as far as
 * anyone can know. `stop` is the run's, or its lane's when the class can send no more. Order matters here:
 * 1. the price is reserved and the row becomes `submitting`, committed, before any byte leaves,
 *    so a crash at any later point is found by the next run as `in_doubt`, never as `pending`;
 * 2. the request is retried only while the service provably did not take it (429, 503, no
 *    connection), through the one retry layer;
 * 3. the answer (request id or failure) is committed before the next step.
 */
export async function submitJob(
  deps: RunDeps,
  completion: Completion,
  job: SendableJob,
  { from: allowFrom, stop }: { from: readonly ReservableState[]; stop: AbortSignal },
): Promise<SubmitOutcome> {
  const cls: PacedClass = submitClassOf(job.type);
  const reserved = await deps.ledger.reserveForSubmit(job.id, deps.options.budgetMicro, allowFrom);
  if (reserved === 'over-budget') return { kind: 'over-budget' };
  // Another process changed it (only one run holds the lock, so this is a bug, or a person's edit).
  if (reserved !== 'reserved') throw new Error(`bug in mediabatch: job ${job.id} could not be reserved from ${allowFrom.join('/')}: ${reserved}`);
  deps.emit({ kind: 'submitting', id: job.id });

  let requestId: string;
  try {
    requestId = await sendWithRetries(deps, completion.request(kindOf(job.type).submit(job)), job, { cls, stop });
  } catch (error) {
    return recordFailure(deps, job, error);
  }
  // Not awaited here: the worker's next reservation then shares this commit (one disk flush
  // per job instead of two). Whoever follows the job waits for `recorded` first.
  const recorded = deps.ledger.markSubmitted(job.id, requestId).catch((error: unknown) => {
    // The service took the job but the ledger could not say so: the row stays `submitting`
    // (in doubt on the next run). The request id is printed so the paid result can be found.
    deps.emit({ kind: 'warning', message: `job "${job.id}" was accepted as request ${requestId}, but the ledger could not record it; keep this id` });
    throw error;
  });
  // Webhooks: which run's secret signs this job's deliveries, in the same commit as its request id.
  completion.sent(job.id);
  return { kind: 'submitted', requestId, recorded };
}

async function sendWithRetries(
  deps: RunDeps,
  request: ServiceRequest,
  job: SendableJob,
  { cls, stop }: { cls: PacedClass; stop: AbortSignal },
): Promise<string> {
  // Aborting the retry layer is only safe between attempts: an attempt in flight must be
  // allowed to finish, or its answer (and the request id in it) would be thrown away.
  const betweenAttempts = new AbortController();
  let inFlight = false;
  // A stop during a backoff wait ends it at once; the failed attempt before it was not taken.
  const onStop = (): void => {
    if (!inFlight) betweenAttempts.abort(new SubmitAbandoned('the run is stopping'));
  };
  stop.addEventListener('abort', onStop, { once: true });
  // An upload (images, multipart) may take its longer timeout to answer: a stop says so.
  const uploads = 'multipart' in request ? 1 : 0;
  return withRetries(
    async (attempt) => {
      if (attempt > 1) {
        if (stop.aborted) throw new SubmitAbandoned('the run is stopping');
        await deps.pace.take(cls, betweenAttempts.signal);
      }
      inFlight = true;
      deps.inFlight.submits += 1;
      deps.inFlight.uploads += uploads;
      try {
        const answer = await deps.client.submit(request);
        deps.pace.observe(cls, answer.rateLimit);
        return answer.value.requestId;
      } finally {
        inFlight = false;
        deps.inFlight.submits -= 1;
        deps.inFlight.uploads -= uploads;
      }
    },
    {
      kind: 'submit',
      ...deps.options.retry,
      signal: betweenAttempts.signal,
      // A 429 pauses the whole class: the job goes back to its lane, which waits without a worker.
      leaveToCaller: (error) => error instanceof RateLimitError,
      onRetry: (error, attempt, delayMs) => {
        deps.emit({ kind: 'retry', what: `submit ${job.id}`, attempt, delayMs, reason: describeError(error) });
        // onRetry runs only after an attempt that provably was not taken, so stopping now is safe.
        if (stop.aborted) betweenAttempts.abort(new SubmitAbandoned('the run is stopping'));
      },
    },
  ).finally(() => stop.removeEventListener('abort', onStop));
}

async function recordFailure(deps: RunDeps, job: SendableJob, error: unknown): Promise<SubmitOutcome> {
  const reason = describeError(error);
  if (error instanceof SubmitAbandoned) {
    await deps.ledger.markNotTaken(job.id, reason);
    return { kind: 'stopped' };
  }
  switch (submitFailureKind(error)) {
    case 'not-taken': {
      await deps.ledger.markNotTaken(job.id, reason);
      // Still unreachable after the retries: every other job would fail the same way. The run
      // stops (exit 4, naming the host); what was sent keeps its state, the rest stays pending.
      if (error instanceof UnreachableError) throw new FatalRunError(error);
      const rateLimited = error instanceof RateLimitError ? error : undefined;
      if (rateLimited !== undefined) deps.pace.rateLimited(submitClassOf(job.type), rateLimited);
      return {
        kind: 'not-taken',
        reason,
        retryAfterMs: rateLimited?.retryAfterMs,
        rateLimited: rateLimited !== undefined,
        daily: rateLimited?.limitType === 'daily',
      };
    }
    case 'refused':
      await deps.ledger.markRefused(job.id, reason);
      return { kind: 'refused', reason };
    case 'fatal':
      // 401/403 and "not enough balance" answer before the job is taken: nothing was charged.
      await deps.ledger.markNotTaken(job.id, reason);
      throw new FatalRunError(error);
    default:
      await deps.ledger.markInDoubt(job.id, reason);
      return { kind: 'in-doubt', reason };
  }
}
