/**
 * Webhook deliveries as the service makes them (docs/webhooks.md, "The simulator's deliveries"),
 * retried on a doubling schedule compressed from the service's ~24 h. The simulator cannot reach
 * a public HTTPS address, so it posts to the webhook URL's path on `webhookTarget`; with none,
 * every attempt fails and is retried, as when no receiver listens.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { pickFault, type FaultSpec, type WebhookFaultKind } from './faults.js';
import { endsAt, type JobBook, type SimJob, type WebhookStats } from './jobs.js';
import type { ResolvedOptions } from './options.js';
import { mulberry32, type Random, type Timers } from './timers.js';

export interface WebhookRequest {
  url: string;
  secret: string | undefined;
}

/** One event for one job: what each attempt at it sends, and the fault drawn for it. */
interface Delivery {
  path: string;
  secret: string | undefined;
  event: Event;
  deliveryId: string;
  body: Buffer;
  fault: WebhookFaultKind | undefined;
}

type Attempt = Pick<Delivery, 'body'> & { headers: Record<string, string> };

type Event = 'job.processing' | 'job.completed' | 'job.failed';

/** How far in the past a `stale` fault dates its timestamp: twice the five minutes a receiver allows. */
const STALE_S = 600;
const OVERSIZED_BYTES = 1.5 * 1024 * 1024;
const TIMEOUT_MS = 10_000;

export class WebhookSender {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 16 });
  private readonly random: Random;

  constructor(
    private readonly options: ResolvedOptions,
    private readonly timers: Timers,
    private readonly faults: () => FaultSpec,
    private readonly stats: WebhookStats,
    private readonly jobs: JobBook,
    private readonly resultUrl: (job: SimJob, now: number) => string,
  ) {
    // Their own stream: deliveries' faults do not shift which answers fail.
    this.random = mulberry32(options.seed ^ 0x9e3779b9);
  }

  /** Plans a job's deliveries when it is accepted; each event draws its fault now, in acceptance order. */
  schedule(job: SimJob, webhook: WebhookRequest): void {
    const now = this.options.clock.nowMs();
    const startsInMs = job.acceptedAt + job.pendingMs - now;
    const endsInMs = endsAt(job) - now;
    const started = this.draw();
    const ended = this.draw();
    const end = job.error ? 'job.failed' : 'job.completed';
    // Reordered: the start is told after the end, as a delivery retried late would arrive.
    const startInMs = started === 'reorder' ? endsInMs + 20 : startsInMs;
    this.timers.after(startInMs, () => this.deliver(job, webhook, 'job.processing', started));
    this.timers.after(endsInMs, () => this.deliver(job, webhook, end, ended));
  }

  close(): void {
    this.agent.destroy();
  }

  private draw(): WebhookFaultKind | undefined {
    return pickFault(this.faults(), 'webhook', this.random()) as WebhookFaultKind | undefined;
  }

  private deliver(job: SimJob, webhook: WebhookRequest, event: Event, drawn: WebhookFaultKind | undefined): void {
    const fault = drawn === 'reorder' ? undefined : drawn;
    const deliveryId = randomUUID();
    const now = this.options.clock.nowMs();
    // The payload is fixed when the event happens: a late retry carries a result URL that may have expired.
    const timestamp = new Date(now).toISOString();
    const body = Buffer.from(JSON.stringify({ event, delivery_id: deliveryId, timestamp, data: this.data(job, event, now) }));
    const delivery: Delivery = { path: pathOf(webhook.url), secret: webhook.secret, event, deliveryId, body, fault };
    if (fault !== undefined) this.stats.faults[fault] = (this.stats.faults[fault] ?? 0) + 1;
    this.stats.events += 1;
    void this.attempt(delivery, 1);
    if (fault === 'forged') {
      // Someone who saw this delivery sends it again naming another job, under its signature.
      const forged = body.toString('utf8').replace(job.requestId, this.jobs.otherThan(job.requestId));
      void this.post(delivery.path, { body: Buffer.from(forged), headers: this.sign(delivery).headers });
    }
  }

  private async attempt(d: Delivery, n: number): Promise<void> {
    if (this.timers.closed) return;
    const spoil = n === 1 ? d.fault : undefined;
    let attempt = this.sign(d, spoil === 'stale' ? STALE_S : 0);
    if (spoil === 'bad-signature') attempt.headers['X-DeAPI-Signature'] = `sha256=${'0'.repeat(64)}`;
    if (spoil === 'oversized') attempt = this.sign({ ...d, body: padded(d.body) });
    const status = await this.post(d.path, attempt);
    if (status !== undefined && status >= 200 && status < 300) {
      this.stats.delivered += 1;
      // The same delivery id again, freshly signed, as a service that retried too eagerly would.
      if (d.fault === 'duplicate') void this.post(d.path, this.sign(d));
      if (d.fault === 'replay') this.timers.after(50, () => void this.post(d.path, attempt));
      return;
    }
    if (n >= this.options.webhookAttempts) {
      this.stats.gaveUp += 1;
      return;
    }
    const waitMs = Math.min(this.options.webhookRetryMs * 2 ** (n - 1), this.options.webhookRetryMaxMs);
    this.timers.after(waitMs, () => void this.attempt(d, n + 1));
  }

  /** An attempt at `d`, signed now, or `ageS` seconds ago. */
  private sign(d: Delivery, ageS = 0): Attempt {
    const timestamp = Math.floor(this.options.clock.nowMs() / 1000) - ageS;
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'X-DeAPI-Timestamp': String(timestamp),
      'X-DeAPI-Event': d.event,
      'X-DeAPI-Delivery-Id': d.deliveryId,
    };
    if (d.secret !== undefined) {
      headers['X-DeAPI-Signature'] = `sha256=${createHmac('sha256', d.secret).update(`${timestamp}.`).update(d.body).digest('hex')}`;
    }
    return { body: d.body, headers };
  }

  /** One POST; the answer's status, or undefined when none came (no receiver, reset, timeout). */
  private post(path: string, attempt: Attempt): Promise<number | undefined> {
    const target = this.options.webhookTarget;
    this.stats.attempts += 1;
    if (target === undefined || this.timers.closed) return Promise.resolve(this.answered(undefined));
    return new Promise((resolve) => {
      const headers = { ...attempt.headers, 'Content-Length': String(attempt.body.length) };
      const req = request(`${target}${path}`, { method: 'POST', agent: this.agent, headers }, (res) => {
        res.resume();
        res.once('end', () => resolve(this.answered(res.statusCode)));
        res.once('error', () => resolve(this.answered(res.statusCode)));
      });
      req.setTimeout(TIMEOUT_MS, () => req.destroy(new Error('no answer in time')));
      // A receiver that refuses a large body may close before reading it all: its answer still counts.
      req.once('error', () => resolve(this.answered(undefined)));
      req.end(attempt.body);
    });
  }

  private answered(status: number | undefined): number | undefined {
    const key = status === undefined ? 'none' : String(status);
    this.stats.answers[key] = (this.stats.answers[key] ?? 0) + 1;
    return status;
  }

  private data(job: SimJob, event: Event, now: number): Record<string, unknown> {
    // The service spells a kind's hyphen as an underscore here (`img_rmbg`).
    const common = { job_request_id: job.requestId, job_type: job.type.replaceAll('-', '_') };
    const iso = new Date(now).toISOString();
    if (event === 'job.processing') return { ...common, status: 'processing', previous_status: 'pending', started_at: iso };
    if (event === 'job.completed') {
      const result = { result_url: this.resultUrl(job, now), processing_time_ms: job.processingMs };
      return { ...common, status: 'done', previous_status: 'processing', completed_at: iso, ...result };
    }
    return { ...common, status: 'error', previous_status: 'processing', failed_at: iso, ...job.error };
  }
}

function pathOf(url: string): string {
  if (!URL.canParse(url)) return '/';
  const { pathname, search } = new URL(url);
  return `${pathname}${search}`;
}

/** The same event with a padding field past 1 MiB: still valid JSON, signed, just too large. */
function padded(body: Buffer): Buffer {
  const text = body.toString('utf8');
  return Buffer.from(`${text.slice(0, -1)},"padding":"${'x'.repeat(OVERSIZED_BYTES)}"}`);
}

/**
 * The optional `webhook_url` (HTTPS, at most 2048 characters) and `webhook_secret` (32 to 255
 * characters) any job request may carry, checked as the service's form requests check them.
 */
export function webhookFields(fields: Record<string, unknown>): { ok: true; value: WebhookRequest | undefined } | { ok: false; errors: Record<string, string[]> } {
  const errors: Record<string, string[]> = {};
  const url = fields['webhook_url'];
  const secret = fields['webhook_secret'];
  const blank = (value: unknown): boolean => value === undefined || value === null || value === '';
  if (!blank(url)) {
    if (typeof url !== 'string') errors['webhook_url'] = ['The webhook url field must be a string.'];
    else if (url.length > 2048) errors['webhook_url'] = ['The webhook url field must not be greater than 2048 characters.'];
    else if (!/^https:\/\/[^/\s]+/i.test(url)) errors['webhook_url'] = ['The webhook url field must start with one of the following: https://.'];
  }
  if (!blank(secret) && (typeof secret !== 'string' || secret.length < 32 || secret.length > 255)) {
    errors['webhook_secret'] = ['The webhook secret field must be between 32 and 255 characters.'];
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, value: blank(url) ? undefined : { url: url as string, secret: blank(secret) ? undefined : (secret as string) } };
}
