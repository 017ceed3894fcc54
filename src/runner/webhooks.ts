/**
 * Following jobs by the service's signed webhooks: the `Completion` (runner/follow.ts) that
 * run() chooses when given a webhook URL. Each request carries the URL and this run's secret, a
 * receiver settles deliveries, and polling stays the safety net: a job not heard from within
 * `silenceMs` is asked about, jobs of earlier runs are asked about as before.
 */
import pLimit, { type LimitFunction } from 'p-limit';
import type { RequestStatus, ServiceRequest } from '../api/types.js';
import type { JobType } from '../jobs/types.js';
import type { DeliveryJob } from '../store/index.js';
import { startReceiver, type Receiver, type Rejection, type WebhookSecret } from '../webhooks/receiver.js';
import type { SignedDelivery, Verdict } from '../webhooks/receiver.js';
import { newWebhookSecret } from '../webhooks/signature.js';
import type { PollSchedules, RunDeps, RunEvent } from './context.js';
import { followedFromRow, pollOnce, settleStatus, type Completion, type FollowHooks } from './follow.js';
import type { Downstream } from './downstream.js';
import { sleep } from './pace.js';

export interface WebhookSettings {
  /** The public HTTPS URL the service posts to: the user's reverse proxy or tunnel to `listen`. */
  url: string;
  listen: { host: string; port: number };
  /** A job not heard from for this long is asked about by a status call. Default 120 000. */
  silenceMs?: number | undefined;
}

export const DEFAULT_SILENCE_MS = 120_000;
/** Rejections reported and written to the ledger one by one; past this many a run only counts them. */
const LOGGED_REJECTIONS = 100;
/** How long a delivery waits for the request id it names to be committed (the service can be quick). */
const RECORDING_WAIT_MS = 3000;

/** What a run's receiver did with the deliveries it verified, and how many it refused. */
type Tally = Omit<Extract<RunEvent, { kind: 'webhooks_summary' }>, 'kind'>;

/** What settling a delivery uses: `collections` are shared with the poller, `forget` drops a job from its queue. */
interface Settling {
  deps: RunDeps;
  downstream: Downstream;
  tally: Tally;
  base: PollSchedules;
  collections: Pick<Collections, 'hold' | 'run'>;
  forget(jobId: string): void;
  /** A request id was answered a moment ago: its row may be a commit away. */
  recentlySent(): boolean;
}

/**
 * Creates this run's secret (kept in the ledger only), and unless `listen` is false starts the
 * receiver, before anything is sent. `base` is the poll schedule without webhooks; jobs are
 * polled by `webhookSchedules(base, silenceMs)` instead.
 */
export async function openWebhookCompletion(
  deps: RunDeps,
  downstream: Downstream,
  settings: WebhookSettings,
  base: PollSchedules,
  listen: boolean,
): Promise<Completion> {
  // Earlier runs' secrets sign the deliveries the service retries for the jobs they sent.
  const secrets: WebhookSecret[] = (await deps.ledger.webhookRuns()).map((r) => ({ run: r.id, secret: r.secret }));
  const tally: Tally = { applied: 0, duplicates: 0, ignored: 0, rejected: 0 };
  let hooks: FollowHooks | undefined;
  let lastSentMs = Number.NEGATIVE_INFINITY;
  const collections = new Collections(deps.options.concurrency * 2, (error) => hooks?.fatal(error));
  const path = new URL(settings.url).pathname;
  const forget = (id: string): void => hooks?.forget(id);
  const recentlySent = (): boolean => performance.now() - lastSentMs < 2000;
  const settling: Settling = { deps, downstream, tally, base, collections, forget, recentlySent };
  const receiver: Receiver | undefined = listen
    ? await startReceiver({
        host: settings.listen.host,
        port: settings.listen.port,
        path,
        nowMs: () => deps.clock.nowMs(),
        secrets: () => secrets,
        onRejected: (rejection) => reportRejection(deps, tally, rejection),
        settle: (delivery) => settleDelivery(settling, delivery),
      })
    : undefined;
  const { run, secret } = await addRun(deps, receiver);
  // Most deliveries are this run's: its secret is tried first.
  secrets.unshift({ run, secret });
  if (receiver !== undefined) deps.emit({ kind: 'webhooks_listening', address: receiver.address, path });

  const submitted = async (jobId: string): Promise<boolean> => (await deps.ledger.getJob(jobId))?.state === 'submitted';
  const claim = async (jobId: string): Promise<(() => void) | undefined> => {
    const release = collections.hold(jobId);
    if (release !== undefined && (await submitted(jobId))) return release;
    release?.();
    return undefined;
  };
  return {
    schedules: webhookSchedules(base, settings.silenceMs ?? DEFAULT_SILENCE_MS),
    request: (request) => withRequestFields(request, { webhook_url: settings.url, webhook_secret: secret }, secret),
    sent: (jobId) => {
      lastSentMs = performance.now();
      // Its failure is the failure of the markSubmitted it commits with, which is reported.
      void deps.ledger.noteWebhookRun(jobId, run).catch(() => undefined);
    },
    // A delivery may have settled it, or be collecting it, since it was queued: no call for it.
    poll: async (job, requestId, giveUpAtMs) => {
      if (collections.isHeld(job.id) || !(await submitted(job.id))) return 'ended';
      return pollOnce(deps, downstream, job, requestId, giveUpAtMs, claim);
    },
    attach: (given) => {
      hooks = given;
    },
    earlierFirstPollMs: (type) => base[type].firstMs,
    drained: () => collections.drained(),
    close: async () => {
      await receiver?.close();
      await collections.drained().catch(() => undefined);
      if (receiver === undefined) return;
      await deps.ledger.recordEvent(null, 'webhooks', { ...tally }).catch(() => undefined);
      deps.emit({ kind: 'webhooks_summary', ...tally });
    },
  };
}

/** The run's secret, stored once the address is ours: a run that cannot listen leaves nothing behind. */
async function addRun(deps: RunDeps, receiver: Receiver | undefined): Promise<{ run: number; secret: string }> {
  const secret = newWebhookSecret();
  try {
    return { run: await deps.ledger.addWebhookRun(secret), secret };
  } catch (error) {
    await receiver?.close();
    throw error;
  }
}

/** Counted always; said and logged up to a bound, so a flood of forgeries floods neither the terminal nor the ledger. */
function reportRejection(deps: RunDeps, tally: Tally, rejection: Rejection): void {
  tally.rejected += 1;
  if (tally.rejected > LOGGED_REJECTIONS) return;
  deps.emit({ kind: 'webhook_rejected', ...rejection });
  void deps.ledger.recordEvent(null, 'webhook_rejected', rejection).catch(() => undefined);
}

/** Each kind's schedule, with webhooks: first asked after `silenceMs`, then every `silenceMs`. */
function webhookSchedules(base: PollSchedules, silenceMs: number): PollSchedules {
  const schedules = { ...base };
  for (const type of Object.keys(base) as JobType[]) {
    schedules[type] = { firstMs: silenceMs, maxMs: silenceMs, factor: 1, giveUpMs: base[type].giveUpMs + silenceMs };
  }
  return schedules;
}

/**
 * The same fields on every kind's request: JSON members, or multipart text fields. `secret` is
 * one of their values that no error text may repeat (a service may echo a request it refuses).
 */
export function withRequestFields(request: ServiceRequest, fields: Record<string, string>, secret: string): ServiceRequest {
  const redact = [...(request.redact ?? []), secret];
  if ('json' in request) return { ...request, json: { ...request.json, ...fields }, redact };
  return { ...request, multipart: { ...request.multipart, fields: { ...request.multipart.fields, ...fields } }, redact };
}

/**
 * Settles one verified delivery, and answers before any download: the delivery id is recorded
 * (a second time changes nothing), a failure or a result is handed to the same code the poller
 * runs after its status call, and only a job still `submitted` moves, so a late
 * `job.processing` or a second `job.completed` never takes a job backwards or downloads twice.
 */
async function settleDelivery(input: Settling, delivery: SignedDelivery): Promise<Verdict> {
  const { deps, tally } = input;
  // Refused, the delivery comes again: to the next run, which collects it.
  if (deps.stop.aborted) return { ok: false, status: 503, reason: 'the run is stopping' };
  const job = await findJob(input, delivery.jobRequestId);
  if (job !== undefined && job.webhookRun !== delivery.signedBy) {
    return { ok: false, status: 401, reason: 'signed with the secret of another run than the one that sent the job' };
  }
  const first = await deps.ledger.recordDelivery({ deliveryId: delivery.deliveryId, event: delivery.event, jobId: job?.id ?? null });
  if (!first) return counted(tally, 'duplicate');
  // A job this ledger does not know (another manifest's, one whose answer never came) or one
  // already settled: recorded, and nothing changes.
  if (job === undefined || job.state !== 'submitted') return counted(tally, 'ignored');
  return counted(tally, await apply(input, delivery, job));
}

async function apply(input: Settling, delivery: SignedDelivery, job: DeliveryJob): Promise<'applied' | 'ignored'> {
  const { deps } = input;
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
      if (status === 'ask') await pollOnce(deps, input.downstream, followed, requestId, giveUpAtMs);
      else await settleStatus(deps, input.downstream, followed, requestId, status, giveUpAtMs);
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
async function findJob(input: Settling, requestId: string): Promise<DeliveryJob | undefined> {
  const { deps } = input;
  const startedMs = performance.now();
  for (;;) {
    const job = await deps.ledger.jobForDelivery(requestId);
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

/**
 * Jobs being collected, and the work that collects them after their delivery was answered: a
 * claim per job shared by deliveries and the poller (one collection at a time per job), and a
 * bound on collections at once (a burst of deliveries must not start a thousand downloads).
 */
export class Collections {
  readonly #held = new Set<string>();
  readonly #tasks = new Set<Promise<void>>();
  readonly #limit: LimitFunction;
  readonly #onFailure: (error: unknown) => void;
  #failure: unknown;

  constructor(limit: number, onFailure: (error: unknown) => void) {
    this.#limit = pLimit(limit);
    this.#onFailure = onFailure;
  }

  isHeld(jobId: string): boolean {
    return this.#held.has(jobId);
  }

  /** Takes the job; undefined when someone has it. The release must be called once. */
  hold(jobId: string): (() => void) | undefined {
    if (this.#held.has(jobId)) return undefined;
    this.#held.add(jobId);
    return () => this.#held.delete(jobId);
  }

  /** Runs `work` when a slot is free; its error is kept for drained() and told at once. */
  run(work: () => Promise<void>): void {
    const task = this.#limit(work).catch((error: unknown) => {
      this.#failure ??= error;
      this.#onFailure(error);
    });
    this.#tasks.add(task);
    void task.finally(() => this.#tasks.delete(task));
  }

  /** Resolves once every collection started has ended; rejects with the first error one met. */
  async drained(): Promise<void> {
    while (this.#tasks.size > 0) await Promise.all(this.#tasks);
    if (this.#failure !== undefined) throw this.#failure;
  }
}
