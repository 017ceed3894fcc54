import type { ServiceRequest } from '../api/types.js';
import type { JobType } from '../jobs/types.js';
import type { PollSchedules, RunDeps } from './context.js';
import type { FollowedJob } from './status.js';
import { pollOnce } from './follow.js';
import type { SplitJoins } from './join-splits.js';

/** What execute gives the completion once its follow queue exists. */
export interface FollowHooks {
  /** The job was settled outside the queue (a webhook delivery): the queue drops it without a call. */
  forget(jobId: string): void;
  /** An error that ends the run (disk, auth) met outside the queue. */
  fatal(error: unknown): void;
}

/**
 * How a submitted job is followed to its end, chosen once by `run()`: by polling alone, or by
 * the service's webhooks with polling as the safety net (runner/webhooks.ts). The follow queue,
 * submit and execute call it the same way whichever it is.
 */
export interface Completion {
  /** How often the follow queue asks about a job of each kind. */
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
export function pollingCompletion(deps: RunDeps, joins: SplitJoins, schedules: PollSchedules): Completion {
  return {
    schedules,
    request: (request) => request,
    sent: () => undefined,
    poll: (job, requestId, giveUpAtMs) => pollOnce(deps, joins, job, requestId, giveUpAtMs),
    earlierFirstPollMs: () => undefined,
    attach: () => undefined,
    drained: async () => undefined,
    close: async () => undefined,
  };
}
