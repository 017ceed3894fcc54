/**
 * The simulator's HTTP server: routing, auth, rate limits, fault injection and latency around
 * the endpoint handlers. Everything it keeps lives in the instance startSimulator returns.
 */
import { SIM_KINDS } from './kinds/index.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseFaultSpec, pickFault, type FaultKind, type FaultScope, type FaultSpec } from './faults.js';
import { SimApi, type Wallet } from './handlers.js';
import { apiError, html, json, parseFields, readBody, writeReply, type Reply } from './http-util.js';
import { JobBook } from './jobs.js';
import { resolveOptions, type ResolvedOptions, type SimOptions } from './options.js';
import { mulberry32, type Random } from './prng.js';
import { RateLimiter, type LimitedClass } from './rate-limit.js';
import { ResultSigner } from './results.js';
import { createStats, statsToJson, type CallKind, type SimStats } from './stats.js';
import { WebhookSender } from './webhooks.js';

export interface Simulator {
  /** e.g. http://127.0.0.1:43121 — the base URL to give a client. */
  url: string;
  token: string;
  port: number;
  stats: SimStats;
  /** The balance now, in USD. */
  readonly balanceUsd: number;
  close(): Promise<void>;
  /** Replaces the fault spec; the fault generator carries on where it was. */
  setFaults(spec: string): void;
  setBalance(usd: number): void;
  /** Where webhook deliveries go from now on (e.g. http://127.0.0.1:8787); undefined: nowhere, retried. */
  setWebhookTarget(target: string | undefined): void;
}

/** The service's limit on a whole request body (docs/service.md: 75 MB). */
const MAX_BODY_BYTES = 75 * 1024 * 1024;
const API = '/api/v1/client';

interface Route {
  call: CallKind;
  cls?: LimitedClass;
  scope?: FaultScope;
  run(req: IncomingMessage, url: URL): Promise<Reply> | Reply;
}

const BEFORE_FAULTS: ReadonlySet<FaultKind> = new Set(['503', '500-before', 'html502', 'reset-before']);

async function drain(req: IncomingMessage): Promise<void> {
  for await (const _chunk of req) {
    // Discard: a fault answers without looking at the body, but must not leave it unread.
  }
}

class SimServer {
  readonly stats: SimStats;
  readonly wallet: Wallet;
  faults: FaultSpec;
  private readonly faultRandom: Random;
  private readonly limiter: RateLimiter;
  private readonly jobs: JobBook;
  private readonly api: SimApi;
  readonly webhooks: WebhookSender;
  private readonly timers = new Set<NodeJS.Timeout>();
  baseUrl = '';

  constructor(private readonly options: ResolvedOptions) {
    this.faults = parseFaultSpec(options.faults);
    this.faultRandom = mulberry32(options.seed);
    this.wallet = { balanceUsd: options.balanceUsd };
    // A separate stream for job outcomes, so adding a fault does not change which jobs fail.
    this.jobs = new JobBook(options, mulberry32(options.seed ^ 0x5bd1e995), (usd) => {
      this.wallet.balanceUsd = Math.round((this.wallet.balanceUsd + usd) * 1e8) / 1e8;
    });
    this.stats = createStats(this.jobs);
    this.limiter = new RateLimiter(options.rateRules, options.rateWindowMs, options.clock);
    // Their own stream again: deliveries' faults do not shift which answers fail.
    this.webhooks = new WebhookSender(
      { target: options.webhookTarget, retryMs: options.webhookRetryMs, retryMaxMs: options.webhookRetryMaxMs, attempts: options.webhookAttempts, timeoutMs: 10_000, clock: options.clock },
      () => this.faults,
      mulberry32(options.seed ^ 0x9e3779b9),
      this.stats.webhooks,
      (job, now) => this.api.resultUrl(job, now),
      (job) => this.anotherJob(job),
    );
    this.api = new SimApi(options, this.wallet, this.jobs, this.stats, new ResultSigner(randomBytes(32), options.clock), () => this.baseUrl, this.webhooks);
  }

  private route(method: string, path: string): Route | 'method' | undefined {
    const get = method === 'GET' || method === 'HEAD';
    const want = (ok: boolean, route: Route): Route | 'method' => (ok ? route : 'method');
    if (path === `${API}/models`) return want(get, { call: 'models', run: (_req, url) => this.api.listModels(url) });
    if (path === `${API}/balance`) return want(get, { call: 'balance', run: () => this.api.balance() });
    for (const { type } of SIM_KINDS) {
      if (path === `${API}/${type}`) {
        return want(method === 'POST', { call: 'submit', cls: `submit:${type}`, scope: 'submit', run: (req) => this.withFields(req, (f) => this.api.submit(type, f)) });
      }
      if (path === `${API}/${type}/price-calculation`) {
        return want(method === 'POST', { call: 'price', cls: 'price', scope: 'price', run: (req) => this.withFields(req, (f) => this.api.price(type, f)) });
      }
    }
    const status = /^\/api\/v1\/client\/request-status\/([^/]+)$/.exec(path);
    if (status) {
      const id = decodeURIComponent(status[1] ?? '');
      return want(get, { call: 'status', cls: 'status', scope: 'status', run: () => this.api.status(id) });
    }
    return undefined;
  }

  private async withFields(req: IncomingMessage, handle: (fields: Awaited<ReturnType<typeof parseFields>>) => Promise<Reply> | Reply): Promise<Reply> {
    const { tooLarge, body } = await readBody(req, MAX_BODY_BYTES);
    if (tooLarge) return html(413, 'Request Entity Too Large');
    return handle(await parseFields(req.headers['content-type'], body));
  }

  private delay(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }

  private authorized(req: IncomingMessage): boolean {
    const match = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
    return match?.[1]?.trim() === this.options.token;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    if (url.pathname.startsWith('/results/') && (method === 'GET' || method === 'HEAD')) {
      this.stats.calls.download++;
      writeReply(req, res, this.api.download(url.pathname.slice('/results/'.length), url));
      return;
    }
    if (url.pathname === '/__sim/stats' && method === 'GET') {
      const reply = this.authorized(req) ? json(200, statsToJson(this.stats, this.wallet.balanceUsd)) : apiError(401, 'Unauthenticated.');
      writeReply(req, res, reply);
      return;
    }
    await this.handleApi(req, res, url, method);
  }

  private async handleApi(req: IncomingMessage, res: ServerResponse, url: URL, method: string): Promise<void> {
    const route = this.route(method, url.pathname);
    const answer = async (reply: Reply, headers: Record<string, string> = {}): Promise<void> => {
      await this.delay(this.options.latencyMs);
      writeReply(req, res, reply, headers);
    };
    if (route === undefined) return answer(apiError(404, `The route ${url.pathname.slice(1)} could not be found.`));
    if (route === 'method') return answer(apiError(405, `The ${method} method is not supported for route ${url.pathname.slice(1)}.`));
    if (!this.authorized(req)) return answer(apiError(401, 'Unauthenticated.'));
    this.stats.calls[route.call]++;
    // One draw per faultable request in arrival order, even if it is then refused, keeps runs reproducible.
    const fault = route.scope ? pickFault(this.faults, route.scope, this.faultRandom()) : undefined;
    const limit = route.cls ? this.limiter.check(route.cls) : { allowed: true, headers: {} };
    if (!limit.allowed && route.cls) {
      this.stats.rateLimited[route.cls] = (this.stats.rateLimited[route.cls] ?? 0) + 1;
      await drain(req);
      return answer(apiError(429, 'Too Many Attempts.'), limit.headers);
    }
    if (fault) this.stats.faults[fault] = (this.stats.faults[fault] ?? 0) + 1;
    if (fault && BEFORE_FAULTS.has(fault)) return this.faultBefore(req, fault, answer);
    let reply = await route.run(req, url);
    if (fault === 'reset-after') {
      req.socket.destroy();
      return;
    }
    if (fault === '500-after') reply = apiError(500, 'Server Error');
    if (fault === 'slow') await this.delay(this.options.slowMs);
    return answer(reply, limit.headers);
  }

  /** Faults that happen before the service takes the request: nothing is accepted or charged. */
  private async faultBefore(req: IncomingMessage, fault: FaultKind, answer: (reply: Reply, headers?: Record<string, string>) => Promise<void>): Promise<void> {
    if (fault === 'reset-before') {
      req.socket.destroy();
      return;
    }
    await drain(req);
    if (fault === '503') return answer(apiError(503, 'Service Unavailable'), { 'Retry-After': '1' });
    if (fault === 'html502') return answer(html(502, 'Bad Gateway'));
    return answer(apiError(500, 'Server Error'));
  }

  /** A request id of another accepted job (or one nobody has), for a forged delivery. */
  private anotherJob(job: { requestId: string }): string {
    for (const id of this.jobs.jobs.keys()) if (id !== job.requestId) return id;
    return randomUUID();
  }

  close(): void {
    this.webhooks.close();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.jobs.close();
  }
}

/** Starts the simulator on 127.0.0.1 (a free port unless `options.port` is given). */
export async function startSimulator(options: SimOptions = {}): Promise<Simulator> {
  const resolved = resolveOptions(options);
  const sim = new SimServer(resolved);
  const server = createServer((req, res) => {
    sim.handle(req, res).catch(() => {
      if (!res.headersSent && !res.destroyed) writeReply(req, res, apiError(500, 'Server Error'));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(resolved.port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  sim.baseUrl = `http://127.0.0.1:${port}`;
  return {
    url: sim.baseUrl,
    token: resolved.token,
    port,
    stats: sim.stats,
    get balanceUsd() {
      return sim.wallet.balanceUsd;
    },
    close: () =>
      new Promise<void>((resolve) => {
        sim.close();
        server.close(() => resolve());
        // Keep-alive sockets would otherwise hold close() open until they time out.
        server.closeAllConnections();
      }),
    setFaults: (spec) => {
      sim.faults = parseFaultSpec(spec);
    },
    setBalance: (usd) => {
      sim.wallet.balanceUsd = usd;
    },
    setWebhookTarget: (target) => {
      sim.webhooks.options.target = target;
    },
  };
}
