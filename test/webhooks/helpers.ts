import { createHmac } from 'node:crypto';
import { request } from 'node:http';
import { createServer } from 'node:net';
import path from 'node:path';
import { createServiceClient } from '../../src/api/client.js';
import { openManifest } from '../../src/manifest/open.js';
import { DEFAULT_RETRY, simulatorPoll, type RunEvent } from '../../src/runner/context.js';
import { run, type RunResult, type WebhookSettings } from '../../src/runner/index.js';
import { runJobs } from '../../src/runner/reports.js';
import type { StatusJob, StatusSummary } from '../../src/report/status.js';
import type { Pace } from '../../src/runner/pace.js';
import type { Simulator } from '../../src/sim/index.js';
import type { Ledger } from '../../src/store/index.js';
import { openSqliteLedger } from '../../src/store/index.js';

export const HOOK_URL = 'https://hooks.example.test/mediabatch/deapi';
export const HOOK_PATH = '/mediabatch/deapi';

export interface WebhookRun {
  /** The receiver's host:port, once it listens. */
  address: Promise<string>;
  events: RunEvent[];
  ledger: Ledger;
  /** The run's result, its summary with every job it covers (read from the ledger once it ended). */
  done: Promise<RunResult & { summary: StatusSummary & { jobs: StatusJob[] } }>;
  stop: AbortController;
}

/** Every job of the ledger as reports show it (its outcome), in manifest order. */
export async function outcomes(ledger: Ledger): Promise<StatusJob[]> {
  const jobs: StatusJob[] = [];
  for await (const job of runJobs(ledger)) jobs.push(job);
  return jobs;
}

/**
 * `run()` in this process against `sim`, following by webhooks: the receiver takes a free port
 * and the simulator is pointed at it as soon as it listens (unless `deliver` is false).
 */
export async function startWebhookRun(options: {
  sim: Simulator;
  manifest: string;
  pace?: Pace;
  silenceMs?: number;
  deliver?: boolean;
}): Promise<WebhookRun> {
  const { sim } = options;
  const dir = path.dirname(options.manifest);
  const ledgerPath = path.join(dir, 'batch.mediabatch.db');
  const ledger = await openSqliteLedger(ledgerPath, { mode: 'read-write' });
  const client = createServiceClient({ baseUrl: sim.url, token: sim.token });
  const events: RunEvent[] = [];
  const stop = new AbortController();
  let listening: (address: string) => void = () => undefined;
  const address = new Promise<string>((resolve) => (listening = resolve));
  const webhooks: WebhookSettings = { url: HOOK_URL, listen: { host: '127.0.0.1', port: 0 }, silenceMs: options.silenceMs ?? 30_000 };
  const done = (async () => {
    try {
      const result = await run({
        manifest: await openManifest(options.manifest),
        ledger,
        service: { client, baseUrl: sim.url },
        files: {
          db: ledgerPath,
          out: path.join(dir, 'batch.out'),
          runJson: path.join(dir, 'batch.run.json'),
          runCsv: path.join(dir, 'batch.run.csv'),
          legacyReport: path.join(dir, 'batch.report.json'),
        },
        plan: 'unlimited',
        pace: options.pace,
        concurrency: 4,
        poll: { schedules: simulatorPoll() },
        retry: { ...DEFAULT_RETRY, minDelayMs: 10, maxDelayMs: 50 },
        webhooks,
        signal: stop.signal,
        onEvent: (event) => {
          events.push(event);
          if (event.kind !== 'webhooks_listening') return;
          if (options.deliver !== false) sim.setWebhookTarget(`http://${event.address}`);
          listening(event.address);
        },
      });
      return { ...result, summary: { ...result.summary, jobs: await outcomes(ledger) } };
    } finally {
      await client.close();
    }
  })();
  // A run that fails before it listens must not leave the test waiting for an address.
  done.catch((error: unknown) => listening(`failed: ${String(error)}`));
  return { address, events, ledger, done, stop };
}

export interface Posted {
  status: number | undefined;
  body: string;
}

/** One POST to the receiver, as the service (or anyone) would send it; any answer is read. */
export function post(address: string, body: Buffer | string, headers: Record<string, string>, pathname = HOOK_PATH): Promise<Posted> {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return new Promise((resolve) => {
    const req = request(`http://${address}${pathname}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode, body: text }));
      res.on('error', () => resolve({ status: res.statusCode, body: text }));
    });
    // A receiver that refuses a large body hangs up before reading it all; its answer came first.
    req.on('error', () => resolve({ status: undefined, body: '' }));
    req.end(bytes);
  });
}

/** The headers the service sends with a body, signed with `secret` at `timestamp` (Unix seconds). */
export function signed(secret: string, body: string, timestamp = Math.floor(Date.now() / 1000), extra: Record<string, string> = {}): Record<string, string> {
  const signature = `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
  return { 'x-deapi-signature': signature, 'x-deapi-timestamp': String(timestamp), ...extra };
}

/** A delivery body as the service writes it. */
export function deliveryBody(event: string, requestId: string, deliveryId: string, data: Record<string, unknown> = {}): string {
  return JSON.stringify({ event, delivery_id: deliveryId, timestamp: new Date().toISOString(), data: { job_request_id: requestId, job_type: 'txt2audio', ...data } });
}

export const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `check` holds, looking every 20 ms, for at most `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const endMs = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > endMs) throw new Error('the condition never held');
    await delay(20);
  }
}

/** A port nobody listens on right now: for a receiver in a child process that a simulator here delivers to. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
