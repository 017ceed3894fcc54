/**
 * The simulator's HTTP server: routing, auth, rate limits, fault injection and latency around
 * the endpoint handlers. Everything it keeps lives in the instance startSimulator returns.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseFaultSpec, pickFault, type FaultKind, type FaultScope, type FaultSpec } from './faults.js';
import { apiError, json, SimApi, type Reply } from './handlers.js';
import { statsToJson, type CallKind } from './jobs.js';
import { SIM_KINDS } from './kinds/index.js';
import { resolveOptions, type ResolvedOptions, type SimOptions } from './options.js';
import { RateLimiter, submitClass, type LimitedClass } from './rate-limit.js';
import type { Fields } from './rules.js';
import { mulberry32 } from './timers.js';

/** The service's limit on a whole request body (docs/service.md: 75 MB). */
const MAX_BODY_BYTES = 75 * 1024 * 1024;
const API = '/api/v1/client';
/** Faults that happen before the service takes the request: nothing is accepted or charged. */
const BEFORE_FAULTS: ReadonlySet<FaultKind> = new Set(['503', '500-before', 'html502', 'reset-before']);

function html(status: number, title: string): Reply {
  const head = `<!DOCTYPE html>\n<html><head><title>${status} ${title}</title></head>\n`;
  const body = `<body><center><h1>${status} ${title}</h1></center><hr><center>nginx</center></body></html>\n`;
  return { status, body: head + body, contentType: 'text/html; charset=UTF-8' };
}

/** The whole request body, or undefined when over `maxBytes` (read to its end all the same). */
async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  // Keep reading to the end even when too large, so the client sees our answer, not a reset.
  for await (const chunk of req as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total <= maxBytes) chunks.push(chunk);
  }
  return total > maxBytes || Number(req.headers['content-length'] ?? 0) > maxBytes ? undefined : Buffer.concat(chunks);
}

/**
 * Form fields from a JSON, multipart or urlencoded body. Like Laravel, a body it cannot read
 * counts as no fields at all, which then fails validation as "required".
 */
async function parseFields(req: IncomingMessage, body: Buffer): Promise<Fields> {
  const contentType = req.headers['content-type'] ?? '';
  const type = contentType.toLowerCase();
  try {
    if (type.includes('json')) {
      const parsed: unknown = JSON.parse(body.toString('utf8'));
      return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Fields) : {};
    }
    if (!type.startsWith('multipart/form-data') && !type.startsWith('application/x-www-form-urlencoded')) return {};
    const request = new Request('http://sim.local/', { method: 'POST', headers: { 'content-type': contentType }, body });
    return bracketed(await request.formData());
  } catch {
    return {};
  }
}

/** Form fields as PHP reads them: `images[]` parts make a list `images`, `loras[0][name]` a list of objects. */
function bracketed(form: FormData): Fields {
  const fields: Record<string, unknown> = {};
  for (const [name, value] of form) {
    const [head = name, ...keys] = name.split(/\]?\[/).map((key) => key.replace(/\]$/, ''));
    let parent: Record<string, unknown> = fields;
    let key = head;
    for (const next of keys) {
      const inner = (parent[key] ??= next === '' || /^\d+$/.test(next) ? [] : {}) as Record<string, unknown>;
      [parent, key] = [inner, next === '' ? String(Object.keys(inner).length) : next];
    }
    parent[key] = value;
  }
  return fields as Fields;
}

function writeReply(req: IncomingMessage, res: ServerResponse, reply: Reply, headers: Record<string, string> = {}): void {
  if (res.destroyed || res.headersSent) return;
  let { body, contentType } = reply;
  const accept = req.headers.accept ?? '';
  // Errors go out as HTML to clients that did not ask for JSON, as the real service does.
  const wantsJson = accept.includes('json') || accept.includes('*/*');
  if (reply.status >= 400 && contentType === 'application/json' && !wantsJson) {
    const message = (JSON.parse(String(body)) as { message?: string }).message ?? 'Error';
    ({ body, contentType } = html(reply.status, message));
  }
  const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.writeHead(reply.status, { ...headers, 'Content-Type': contentType, 'Content-Length': String(payload.length) });
  res.end(req.method === 'HEAD' ? undefined : payload);
}

interface Route {
  method: 'GET' | 'POST';
  call: CallKind;
  /** Submits, price and status calls are rate limited and take faults of their scope (= `call`). */
  cls?: LimitedClass;
  run(req: IncomingMessage, url: URL): Promise<Reply> | Reply;
}

class SimServer {
  faults: FaultSpec;
  readonly api: SimApi;
  private readonly faultRandom: () => number;
  private readonly limiter: RateLimiter;
  private readonly routes: Map<string, Route>;

  constructor(readonly options: ResolvedOptions) {
    this.faults = parseFaultSpec(options.faults);
    this.faultRandom = mulberry32(options.seed);
    this.api = new SimApi(options, () => this.faults);
    this.limiter = new RateLimiter(options.rateRules, options.rateWindowMs, options.clock);
    const post = (call: 'submit' | 'price', cls: LimitedClass, handle: (fields: Fields) => Promise<Reply>): Route => ({
      method: 'POST',
      call,
      cls,
      run: async (req) => {
        const body = await readBody(req, MAX_BODY_BYTES);
        return body ? handle(await parseFields(req, body)) : html(413, 'Request Entity Too Large');
      },
    });
    this.routes = new Map<string, Route>([
      [`${API}/models`, { method: 'GET', call: 'models', run: (_req, url) => this.api.listModels(url) }],
      [`${API}/balance`, { method: 'GET', call: 'balance', run: () => this.api.balance() }],
      ...SIM_KINDS.flatMap(({ type, paths, paceClass }): [string, Route][] => [
        [
          `${API}/${paths?.submit ?? type}`,
          post('submit', submitClass({ type, paceClass }), (fields) => this.api.submit(type, fields)),
        ],
        [
          `${API}/${paths?.price ?? `${type}/price-calculation`}`,
          post('price', 'price', (fields) => this.api.price(type, fields)),
        ],
      ]),
    ]);
  }

  private route(path: string): Route | undefined {
    const status = /^\/api\/v1\/client\/request-status\/([^/]+)$/.exec(path);
    if (!status) return this.routes.get(path);
    const id = decodeURIComponent(status[1] ?? '');
    return { method: 'GET', call: 'status', cls: 'status', run: () => this.api.status(id) };
  }

  private authorized(req: IncomingMessage): boolean {
    return /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim() === this.options.token;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    if (url.pathname.startsWith('/results/') && (method === 'GET' || method === 'HEAD')) {
      this.api.stats.calls.download++;
      return writeReply(req, res, this.api.download(url.pathname.slice('/results/'.length), url));
    }
    if (url.pathname === '/__sim/stats' && method === 'GET') {
      const stats = statsToJson(this.api.stats, this.api.balanceUsd);
      return writeReply(req, res, this.authorized(req) ? json(200, stats) : apiError(401, 'Unauthenticated.'));
    }
    const answer = async (reply: Reply, headers: Record<string, string> = {}): Promise<void> => {
      await this.api.timers.sleep(this.options.latencyMs);
      writeReply(req, res, reply, headers);
    };
    const route = this.route(url.pathname);
    const where = url.pathname.slice(1);
    if (route === undefined) return answer(apiError(404, `The route ${where} could not be found.`));
    if (route.method !== (method === 'HEAD' ? 'GET' : method)) {
      return answer(apiError(405, `The ${method} method is not supported for route ${where}.`));
    }
    if (!this.authorized(req)) return answer(apiError(401, 'Unauthenticated.'));
    const { stats } = this.api;
    stats.calls[route.call]++;
    // One draw per faultable request in arrival order, even if it is then refused, keeps runs reproducible.
    const fault = route.cls ? pickFault(this.faults, route.call as FaultScope, this.faultRandom()) : undefined;
    const limit = route.cls ? this.limiter.check(route.cls) : { allowed: true, headers: {} };
    if (!limit.allowed && route.cls) {
      stats.rateLimited[route.cls] = (stats.rateLimited[route.cls] ?? 0) + 1;
      await readBody(req, 0);
      return answer(apiError(429, 'Too Many Attempts.'), limit.headers);
    }
    if (fault) stats.faults[fault] = (stats.faults[fault] ?? 0) + 1;
    if (fault === 'reset-before' || fault === 'reset-after') {
      // Reset after: the work is done (the job accepted and charged), then the answer is lost.
      if (fault === 'reset-after') await route.run(req, url);
      req.socket.destroy();
      return;
    }
    if (fault && BEFORE_FAULTS.has(fault)) {
      await readBody(req, 0);
      if (fault === '503') return answer(apiError(503, 'Service Unavailable'), { 'Retry-After': '1' });
      return answer(fault === 'html502' ? html(502, 'Bad Gateway') : apiError(500, 'Server Error'));
    }
    const reply = await route.run(req, url);
    if (fault === 'slow') await this.api.timers.sleep(this.options.slowMs);
    return answer(fault === '500-after' ? apiError(500, 'Server Error') : reply, limit.headers);
  }
}

export type Simulator = Awaited<ReturnType<typeof startSimulator>>;

/** Starts the simulator on 127.0.0.1 (a free port unless `options.port` is given). */
export async function startSimulator(options: SimOptions = {}) {
  const sim = new SimServer(resolveOptions(options));
  const server = createServer((req, res) => {
    sim.handle(req, res).catch(() => {
      if (!res.headersSent && !res.destroyed) writeReply(req, res, apiError(500, 'Server Error'));
      else res.destroy();
    });
  });
  server.listen(sim.options.port, '127.0.0.1');
  // Rejects with the listen error (EADDRINUSE, EACCES) if that comes instead.
  await once(server, 'listening');
  sim.api.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    /** e.g. http://127.0.0.1:43121 — the base URL to give a client. */
    url: sim.api.baseUrl,
    token: sim.options.token,
    stats: sim.api.stats,
    get balanceUsd(): number {
      return sim.api.balanceUsd;
    },
    close: () =>
      new Promise<void>((resolve) => {
        sim.api.timers.close();
        sim.api.webhooks.close();
        server.close(() => resolve());
        // Keep-alive sockets would otherwise hold close() open until they time out.
        server.closeAllConnections();
      }),
    /** Replaces the fault spec; the fault generator carries on where it was. */
    setFaults: (spec: string): void => {
      sim.faults = parseFaultSpec(spec);
    },
    /** The share of jobs accepted from now on that end in 'error' (a test fails an input, then lets it heal). */
    setJobErrorRate: (rate: number): void => {
      sim.options.jobErrorRate = resolveOptions({ jobErrorRate: rate }).jobErrorRate;
    },
    setBalance: (usd: number): void => {
      sim.api.balanceUsd = usd;
    },
    /** Where webhook deliveries go from now on (e.g. http://127.0.0.1:8787); undefined: nowhere, retried. */
    setWebhookTarget: (target: string | undefined): void => {
      sim.options.webhookTarget = target;
    },
  };
}
