import type { RequestStatus } from '../api/types.js';
import type { DeliveryJob } from '../store/index.js';
import type { SignedDelivery, Verdict } from '../webhooks/receiver.js';
import type { PollSchedules, RunDeps, RunEvent } from './context.js';
import { followedFromRow, pollOnce, settleStatus } from './follow.js';
import type { SplitJoins } from './join-splits.js';
import { sleep } from './pace.js';
import type { Collections } from './webhooks.js';

/** What a run's receiver did with the deliveries it verified, and how many it refused. */
export type Tally = Omit<Extract<RunEvent, { kind: 'webhooks_summary' }>, 'kind'>;

export interface SettleInput {
  deps: RunDeps;
  joins: SplitJoins;
  delivery: SignedDelivery;
  tally: Tally;
  /** Claims shared with the poller, and collections run after the answer has gone, bounded, their failure reported. */
  collections: Pick<Collections, 'hold' | 'run'>;
  /** Drops the job from the poller's queue (once a delivery has settled it). */
  forget(jobId: string): void;
  base: PollSchedules;
  /** A request id was answered a moment ago: its row may be a commit away. */
  recentlySent(): boolean;
}

/** How long a delivery waits for the request id it names to be committed (the service can be quick). */
const RECORDING_WAIT_MS = 3000;

/**
 * Settles one verified delivery, and answers before any download: the delivery id is recorded
 * (a second time changes nothing), a failure or a result is handed to the same code the poller
 * runs after its status call, and only a job still `submitted` moves, so a late
 * `job.processing` or a second `job.completed` never takes a job backwards or downloads twice.
 */
export async function settleDelivery(input: SettleInput): Promise<Verdict> {
  const { deps, delivery, tally } = input;
  // Refused, the delivery comes again: to the next run, which collects it.
  if (deps.stop.aborted) return { ok: false, status: 503, reason: 'the run is stopping' };
  const job = await findJob(input);
  if (job !== undefined && job.webhookRun !== delivery.signedBy) {
    return { ok: false, status: 401, reason: 'signed with the secret of another run than the one that sent the job' };
  }
  const first = await deps.ledger.recordDelivery({ deliveryId: delivery.deliveryId, event: delivery.event, jobId: job?.id ?? null });
  if (!first) return counted(tally, 'duplicate');
  // A job this ledger does not know (another manifest's, one whose answer never came) or one
  // already settled: recorded, and nothing changes.
  if (job === undefined || job.state !== 'submitted') return counted(tally, 'ignored');
  return counted(tally, await apply(input, job));
}

async function apply(input: SettleInput, job: DeliveryJob): Promise<'applied' | 'ignored'> {
  const { deps, delivery } = input;
  if (delivery.event === 'job.processing') {
    await deps.ledger.recordEvent(job.id, 'webhook_processing', { deliveryId: delivery.deliveryId });
    return 'applied';
  }
  const status = statusOf(delivery);
  if (status === 'not-a-result') return 'ignored';
  const release = input.collections.hold(job.id);
  // The poller is collecting it right now, from the same answer the service gives.
  if (release === undefined) return 'applied';
  const followed = followedFromRow(job);
  const giveUpAtMs = deps.clock.nowMs() + input.base[job.type].giveUpMs;
  const requestId = delivery.jobRequestId;
  input.collections.run(async () => {
    try {
      // A failure that says too little is asked about once, as the poller would (the job is held already).
      if (status === 'ask') await pollOnce(deps, input.joins, followed, requestId, giveUpAtMs);
      else await settleStatus(deps, input.joins, followed, requestId, status, giveUpAtMs);
    } finally {
      release();
    }
    // Settled, it leaves the poller's queue. Still submitted (a download that failed, a status
    // that said it runs), it stays there, and is asked about when its silence runs out.
    if ((await deps.ledger.getJob(job.id))?.state !== 'submitted') input.forget(job.id);
  });
  return 'applied';
}

/**
 * A delivery as the status the poller would have read. A failure without `retryable` and
 * `refunded` (the service's documented payload has neither) is asked about once: whether the
 * job is sent again, and whether its price stays spent, rests on them.
 */
function statusOf(delivery: SignedDelivery): RequestStatus | 'ask' | 'not-a-result' {
  if (delivery.event === 'job.completed') return { status: 'done', rawStatus: 'done', resultUrl: delivery.resultUrl };
  if (delivery.event !== 'job.failed') return 'not-a-result';
  const failure = delivery.failure ?? {};
  if (failure.retryable === undefined || failure.refunded === undefined) return 'ask';
  return { status: 'error', rawStatus: 'error', ...failure };
}

/**
 * The job whose request id the delivery names. The service may deliver before the answer to
 * the submit has been committed here: while submits are in flight, or one was answered a
 * moment ago, it looks again for a little while.
 */
async function findJob(input: SettleInput): Promise<DeliveryJob | undefined> {
  const { deps, delivery } = input;
  const startedMs = performance.now();
  for (;;) {
    const job = await deps.ledger.jobForDelivery(delivery.jobRequestId);
    if (job !== undefined) return job;
    const recording = deps.inFlight.submits > 0 || input.recentlySent();
    if (!recording || performance.now() - startedMs > RECORDING_WAIT_MS) return undefined;
    await sleep(25);
  }
}

function counted(tally: Tally, outcome: 'applied' | 'duplicate' | 'ignored'): Verdict {
  tally[outcome === 'duplicate' ? 'duplicates' : outcome] += 1;
  return { ok: true, outcome };
}
