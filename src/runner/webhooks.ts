/**
 * Following jobs by the service's signed webhooks, as one seam the rest of the runner calls in
 * a few places: submit adds the fields to each request and notes the run (submit.ts), the poller
 * asks whether a job is still its to ask about (follow.ts), execute hands over its queue so a
 * settled job leaves it and waits for deliveries being collected (execute.ts), and run() opens
 * and closes it (index.ts). Polling stays the safety net: a job not heard from within
 * `silenceMs` is asked about, jobs of earlier runs are asked about as before.
 */
import type { ServiceRequest } from '../api/types.js';
import type { JobType } from '../jobs/types.js';
import { startReceiver, type Receiver, type Rejection, type WebhookSecret } from '../webhooks/receiver.js';
import { newWebhookSecret } from '../webhooks/signature.js';
import type { PollSchedules, RunContext } from './context.js';
import { Collections } from './webhook-collections.js';
import { settleDelivery, type Tally } from './webhook-settle.js';

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

/** What execute gives the seam once its poller exists. */
export interface FollowHooks {
  /** The job was settled by a delivery: the poller drops it without a call. */
  forget(jobId: string): void;
  /** An error that ends the run (disk, auth) in a delivery's collection. */
  fatal(error: unknown): void;
}

export interface RunWebhooks {
  /** Adds `webhook_url` and this run's secret to a generation request, whatever its kind. */
  withFields(request: ServiceRequest): ServiceRequest;
  /** Notes that this run sent the job; asked in the turn markSubmitted is, it shares its commit. */
  sent(jobId: string): void;
  /** Whether the job is still `submitted` and no delivery is collecting it. */
  outstanding(jobId: string): Promise<boolean>;
  /** As outstanding(), and if so holds the job until the returned release is called. */
  claim(jobId: string): Promise<(() => void) | undefined>;
  attach(hooks: FollowHooks): void;
  /** When a job of an earlier run is first asked about: its kind's usual first poll. */
  earlierFirstPollMs(type: JobType): number;
  /** Resolves once every delivery being collected is; rejects with an error that ended one. */
  drained(): Promise<void>;
  /** Stops listening, waits for what deliveries started, records the run's counts. */
  close(): Promise<void>;
}

/**
 * Creates this run's secret (kept in the ledger only), and unless `listen` is false starts the
 * receiver, before anything is sent. `base` is the poll schedule without webhooks; the caller
 * polls by `webhookSchedules(base, silenceMs)` instead.
 */
export async function openRunWebhooks(ctx: RunContext, settings: WebhookSettings, base: PollSchedules, listen: boolean): Promise<RunWebhooks> {
  // Earlier runs' secrets sign the deliveries the service retries for the jobs they sent.
  const secrets: WebhookSecret[] = (await ctx.ledger.webhookRuns()).map((r) => ({ run: r.id, secret: r.secret }));
  const tally: Tally = { applied: 0, duplicates: 0, ignored: 0, rejected: 0 };
  let hooks: FollowHooks | undefined;
  let lastSentMs = Number.NEGATIVE_INFINITY;
  const collections = new Collections(ctx.options.concurrency * 2, (error) => hooks?.fatal(error));
  const path = new URL(settings.url).pathname;
  const receiver: Receiver | undefined = listen
    ? await startReceiver({
        host: settings.listen.host,
        port: settings.listen.port,
        path,
        nowMs: () => ctx.clock.nowMs(),
        secrets: () => secrets,
        onRejected: (rejection) => reportRejection(ctx, tally, rejection),
        settle: (delivery) =>
          settleDelivery({
            ctx,
            delivery,
            tally,
            base,
            hold: (id) => collections.hold(id),
            forget: (id) => hooks?.forget(id),
            track: (work) => collections.run(work),
            recentlySent: () => performance.now() - lastSentMs < 2000,
          }),
      })
    : undefined;
  const { run, secret } = await addRun(ctx, receiver);
  // Most deliveries are this run's: its secret is tried first.
  secrets.unshift({ run, secret });
  if (receiver !== undefined) ctx.emit({ kind: 'webhooks_listening', address: receiver.address, path });

  const outstanding = async (jobId: string): Promise<boolean> => !collections.isHeld(jobId) && (await ctx.ledger.getJob(jobId))?.state === 'submitted';
  return {
    withFields: (request) => withRequestFields(request, { webhook_url: settings.url, webhook_secret: secret }, secret),
    sent: (jobId) => {
      lastSentMs = performance.now();
      // Its failure is the failure of the markSubmitted it commits with, which is reported.
      void ctx.ledger.noteWebhookRun(jobId, run).catch(() => undefined);
    },
    outstanding,
    claim: async (jobId) => {
      const release = collections.hold(jobId);
      if (release === undefined) return undefined;
      if ((await ctx.ledger.getJob(jobId))?.state === 'submitted') return release;
      release();
      return undefined;
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
      await ctx.ledger.recordEvent(null, 'webhooks', { ...tally }).catch(() => undefined);
      ctx.emit({ kind: 'webhooks_summary', ...tally });
    },
  };
}

/** The run's secret, stored once the address is ours: a run that cannot listen leaves nothing behind. */
async function addRun(ctx: RunContext, receiver: Receiver | undefined): Promise<{ run: number; secret: string }> {
  const secret = newWebhookSecret();
  try {
    return { run: await ctx.ledger.addWebhookRun(secret), secret };
  } catch (error) {
    await receiver?.close();
    throw error;
  }
}

/** Counted always; said and logged up to a bound, so a flood of forgeries floods neither the terminal nor the ledger. */
function reportRejection(ctx: RunContext, tally: Tally, rejection: Rejection): void {
  tally.rejected += 1;
  if (tally.rejected > LOGGED_REJECTIONS) return;
  ctx.emit({ kind: 'webhook_rejected', ...rejection });
  void ctx.ledger.recordEvent(null, 'webhook_rejected', rejection).catch(() => undefined);
}

/** Each kind's schedule, with webhooks: first asked after `silenceMs`, then every `silenceMs`. */
export function webhookSchedules(base: PollSchedules, silenceMs: number): PollSchedules {
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
