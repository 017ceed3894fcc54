/**
 * Webhook deliveries as the service makes them: for a job whose request carried `webhook_url`,
 * `job.processing` when it starts and `job.completed` or `job.failed` when it ends, POSTed as
 * JSON with `X-DeAPI-Signature: sha256=<hex HMAC-SHA256(secret, timestamp + "." + body)>`,
 * `X-DeAPI-Timestamp`, `X-DeAPI-Event` and `X-DeAPI-Delivery-Id`. A delivery that is not
 * answered 2xx within 10 s is sent again on a doubling schedule (compressed from the service's
 * ~24 h). The simulator cannot reach a public HTTPS address, so it posts to the webhook URL's
 * path on `target` (the receiver's listen address); with no target, every attempt fails and is
 * retried, as when no receiver listens.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { pickFault, type FaultSpec, type WebhookFaultKind } from './faults.js';
import { JobBook, type SimJob } from './jobs.js';
import type { Random } from './prng.js';
import type { WebhookStats } from './stats.js';
import type { Clock } from '../clock.js';

export interface WebhookSenderOptions {
  /** e.g. http://127.0.0.1:8787; undefined: nobody listens (attempts fail and are retried). */
  target: string | undefined;
  /** The first retry's wait; each next one doubles, up to `retryMaxMs`. */
  retryMs: number;
  retryMaxMs: number;
  /** Attempts per delivery, the first included. */
  attempts: number;
  timeoutMs: number;
  clock: Clock;
}

export interface WebhookRequest {
  url: string;
  secret: string | undefined;
}

interface Attempt {
  body: Buffer;
  headers: Record<string, string>;
}

type Event = 'job.processing' | 'job.completed' | 'job.failed';

/** How far in the past a `stale` fault dates its timestamp: twice the five minutes a receiver allows. */
const STALE_S = 600;
const OVERSIZED_BYTES = 1.5 * 1024 * 1024;

export class WebhookSender {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 16 });
  private closed = false;

  constructor(
    public options: WebhookSenderOptions,
    private readonly faults: () => FaultSpec,
    private readonly random: Random,
    private readonly stats: WebhookStats,
    private readonly resultUrl: (job: SimJob, now: number) => string,
    private readonly otherJob: (job: SimJob) => string,
  ) {}

  /** Plans a job's deliveries when it is accepted; each event draws its fault now, in acceptance order. */
  schedule(job: SimJob, webhook: WebhookRequest): void {
    const startsAt = job.acceptedAt + job.pendingMs;
    const endsAt = JobBook.endsAt(job);
    const started = this.draw();
    const ended = this.draw();
    // Reordered: the start is told after the end, as a delivery retried late would arrive.
    const startAt = started === 'reorder' ? endsAt + 20 : startsAt;
    this.at(startAt, () => this.deliver(job, webhook, 'job.processing', started === 'reorder' ? undefined : started));
    this.at(endsAt, () => this.deliver(job, webhook, job.error ? 'job.failed' : 'job.completed', ended === 'reorder' ? undefined : ended));
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.agent.destroy();
  }

  private draw(): WebhookFaultKind | undefined {
    const fault = pickFault(this.faults(), 'webhook', this.random());
    return fault as WebhookFaultKind | undefined;
  }

  private deliver(job: SimJob, webhook: WebhookRequest, event: Event, fault: WebhookFaultKind | undefined): void {
    const deliveryId = randomUUID();
    const now = this.options.clock.nowMs();
    // The payload is fixed when the event happens: a late retry carries a result URL that may have expired.
    const body = Buffer.from(JSON.stringify({ event, delivery_id: deliveryId, timestamp: new Date(now).toISOString(), data: this.data(job, event, now) }));
    if (fault !== undefined) this.stats.faults[fault] = (this.stats.faults[fault] ?? 0) + 1;
    this.stats.events += 1;
    const path = pathOf(webhook.url);
    void this.attempt(path, webhook.secret, { event, deliveryId, body }, 1, fault);
    if (fault === 'forged') {
      // Someone who saw this delivery sends it again naming another job, under its signature.
      const forgedBody = Buffer.from(body.toString('utf8').replace(job.requestId, this.otherJob(job)));
      const original = this.sign(webhook.secret, { event, deliveryId, body }, this.nowSeconds());
      void this.post(path, { body: forgedBody, headers: original.headers });
    }
  }

  private async attempt(path: string, secret: string | undefined, event: { event: Event; deliveryId: string; body: Buffer }, n: number, fault: WebhookFaultKind | undefined): Promise<void> {
    if (this.closed) return;
    const spoil = n === 1 && (fault === 'bad-signature' || fault === 'stale' || fault === 'oversized') ? fault : undefined;
    let attempt = this.sign(secret, event, this.nowSeconds() - (spoil === 'stale' ? STALE_S : 0));
    if (spoil === 'bad-signature') attempt.headers['X-DeAPI-Signature'] = `sha256=${'0'.repeat(64)}`;
    if (spoil === 'oversized') attempt = this.sign(secret, { ...event, body: padded(event.body) }, this.nowSeconds());
    const status = await this.post(path, attempt);
    if (status !== undefined && status >= 200 && status < 300) {
      this.stats.delivered += 1;
      // The same delivery id again, freshly signed, as a service that retried too eagerly would.
      if (fault === 'duplicate') void this.post(path, this.sign(secret, event, this.nowSeconds()));
      if (fault === 'replay') this.at(this.options.clock.nowMs() + 50, () => void this.post(path, attempt));
      return;
    }
    if (n >= this.options.attempts) {
      this.stats.gaveUp += 1;
      return;
    }
    const waitMs = Math.min(this.options.retryMs * 2 ** (n - 1), this.options.retryMaxMs);
    this.at(this.options.clock.nowMs() + waitMs, () => void this.attempt(path, secret, event, n + 1, fault));
  }

  private sign(secret: string | undefined, event: { event: Event; deliveryId: string; body: Buffer }, timestamp: number): Attempt {
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'X-DeAPI-Timestamp': String(timestamp),
      'X-DeAPI-Event': event.event,
      'X-DeAPI-Delivery-Id': event.deliveryId,
    };
    if (secret !== undefined) {
      headers['X-DeAPI-Signature'] = `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(event.body).digest('hex')}`;
    }
    return { body: event.body, headers };
  }

  /** One POST; the answer's status, or undefined when none came (no receiver, reset, timeout). */
  private post(path: string, attempt: Attempt): Promise<number | undefined> {
    const target = this.options.target;
    this.stats.attempts += 1;
    if (target === undefined || this.closed) return Promise.resolve(this.answered(undefined));
    return new Promise((resolve) => {
      const req = request(`${target}${path}`, { method: 'POST', agent: this.agent, headers: { ...attempt.headers, 'Content-Length': String(attempt.body.length) } }, (res) => {
        res.resume();
        res.once('end', () => resolve(this.answered(res.statusCode)));
        res.once('error', () => resolve(this.answered(res.statusCode)));
      });
      req.setTimeout(this.options.timeoutMs, () => req.destroy(new Error('no answer in time')));
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
    const common = { job_request_id: job.requestId, job_type: job.type };
    const iso = new Date(now).toISOString();
    if (event === 'job.processing') return { ...common, status: 'processing', previous_status: 'pending', started_at: iso };
    if (event === 'job.completed') {
      return { ...common, status: 'done', previous_status: 'processing', completed_at: iso, result_url: this.resultUrl(job, now), processing_time_ms: job.processingMs };
    }
    return { ...common, status: 'error', previous_status: 'processing', failed_at: iso, ...job.error };
  }

  private nowSeconds(): number {
    return Math.floor(this.options.clock.nowMs() / 1000);
  }

  private at(whenMs: number, run: () => void): void {
    if (this.closed) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, Math.max(0, whenMs - this.options.clock.nowMs()));
    this.timers.add(timer);
  }
}

function pathOf(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  } catch {
    return '/';
  }
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
