/**
 * The webhook receiver: a plain HTTP server on the address a user's reverse proxy or tunnel
 * forwards to. It verifies every request before anything is settled: the path, the size, the
 * timestamp and the signature's form from the headers alone, then the signature over the body
 * read within its limit, and only then the body as JSON. What a verified delivery does is the
 * caller's business (`settle`); the answer goes out once that has resolved.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ConfigError } from '../errors.js';
import { readDelivery, type Delivery } from './delivery.js';
import { signatureMatches } from './signature.js';
import { systemClock } from '../clock.js';

/** One run's secret, by the run's number. */
export interface WebhookSecret {
  run: number;
  secret: string;
}

/** A delivery whose signature held, and the run whose secret made it. */
export interface SignedDelivery extends Delivery {
  signedBy: number;
}

/**
 * How a verified delivery was taken: 2xx for all three outcomes; 401 when it was signed with
 * the secret of another run than the job's; 503 when the run is stopping (the service sends it
 * again later).
 */
export type Verdict = { ok: true; outcome: 'applied' | 'duplicate' | 'ignored' } | { ok: false; status: 401 | 503; reason: string };

export interface Rejection {
  status: number;
  /** Says what was wrong, never what came: no secret, signature or body ends up in a log. */
  reason: string;
}

/** What a receiver may be given beside its address, path, secrets and callbacks. */
const DEFAULTS = {
  maxBodyBytes: 1024 * 1024,
  /** Connections open at once, so at most that many bodies are held while read. */
  maxConnections: 32,
  /**
   * How long a client may take over its headers and its whole request; a connection silent
   * between requests goes after Node's keep-alive timeout.
   */
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  /** How far a timestamp may be from now, either way. */
  toleranceMs: 300_000,
  /** What a timestamp is compared with: the run's clock. */
  nowMs: systemClock.nowMs,
};

export type ReceiverOptions = Partial<typeof DEFAULTS> & {
  host: string;
  port: number;
  /** Deliveries are taken on this path only (the webhook URL's). */
  path: string;
  /** Every secret a delivery may be signed with: the current run's and earlier runs'. */
  secrets: () => readonly WebhookSecret[];
  settle: (delivery: SignedDelivery) => Promise<Verdict>;
  onRejected: (rejection: Rejection) => void;
};

type Settings = ReceiverOptions & typeof DEFAULTS;

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

const SIGNATURE = /^sha256=[0-9a-f]{64}$/i;
const TIMESTAMP = /^\d{1,12}$/;

/** Listens on `host:port`; a port that cannot be had is a ConfigError (exit 4) naming it. */
export async function startReceiver(options: ReceiverOptions) {
  const settings: Settings = { ...DEFAULTS, ...options };
  const { headersTimeoutMs, requestTimeoutMs } = settings;
  const busy = new WeakSet<Socket>();
  const server = createServer(
    {
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      // Node checks the two timeouts above only this often (every 30 s unless told): a client
      // trickling its headers or body would outlive them by that much.
      connectionsCheckingInterval: Math.max(10, Math.min(headersTimeoutMs, requestTimeoutMs) / 10),
    },
    (req, res) => {
      answer(settings, req, res, busy).catch((error: unknown) => {
        options.onRejected({ status: 500, reason: `the delivery could not be recorded: ${(error as Error).message}` });
        reply(res, 500, { message: 'the delivery could not be recorded; send it again' });
      });
    },
  );
  server.maxHeadersCount = 50;
  capConnections(server, settings.maxConnections, busy);
  await listen(server, options.host, options.port);
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return {
    /** `host:port` as bound (a port 0 becomes the one the system gave). */
    address: `${host}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Past `max` open connections, a new one pushes out the oldest that is not answering a verified
 * delivery: a real delivery sends its request at once and is done in moments, so sockets held
 * open by someone else cannot lock it out, and no more than `max` bodies are read at a time.
 */
function capConnections(server: Server, max: number, busy: WeakSet<Socket>): void {
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    if (open.size >= max) {
      const oldest = [...open].find((candidate) => !busy.has(candidate));
      if (oldest === undefined) return void socket.destroy();
      open.delete(oldest);
      oldest.destroy();
    }
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
}

async function answer(options: Settings, req: IncomingMessage, res: ServerResponse, busy: WeakSet<Socket>) {
  // `early`: refused without reading (the rest of) the body, so the connection goes with the answer.
  const reject = (rejection: Rejection, early = false): void => {
    options.onRejected(rejection);
    if (early) return refuse(req, res, rejection);
    reply(res, rejection.status, { message: rejection.reason });
  };
  if (req.method !== 'POST') return refuse(req, res, { status: 405, reason: 'deliveries are POSTed' }, { Allow: 'POST' });
  // All the headers can tell is checked before a byte of the body is read; such an answer ends
  // the connection, so a request that is no delivery costs neither memory nor a socket for long.
  const early = headerRefusal(options, req);
  if (early !== undefined) return reject(early, true);
  const body = await readCapped(req, options.maxBodyBytes);
  if (body === 'gone') return;
  if (body === 'too-large') return reject(overSize(options.maxBodyBytes), true);
  const signature = (header(req, 'x-deapi-signature') ?? '').toLowerCase();
  const timestamp = header(req, 'x-deapi-timestamp') ?? '';
  // Each secret is tried in full: which one matched, or how nearly, takes no less time to learn.
  const signer = options.secrets().find((candidate) => signatureMatches(signature, candidate.secret, timestamp, body));
  if (signer === undefined) return reject({ status: 401, reason: 'the signature matches no secret of this ledger' });
  busy.add(req.socket);
  res.once('close', () => busy.delete(req.socket));

  const delivery = readDelivery(body, { deliveryId: header(req, 'x-deapi-delivery-id'), event: header(req, 'x-deapi-event') });
  if ('problem' in delivery) return reject({ status: delivery.status, reason: delivery.problem });
  const verdict = await options.settle({ ...delivery, signedBy: signer.run });
  if (!verdict.ok) return reject({ status: verdict.status, reason: verdict.reason });
  reply(res, 200, { received: true, outcome: verdict.outcome });
}

const overSize = (maxBytes: number): Rejection => ({ status: 413, reason: `the body is over ${maxBytes} bytes` });

/** Why the request is refused on its headers alone: path, declared size, signature's form, timestamp. */
function headerRefusal(options: Settings, req: IncomingMessage): Rejection | undefined {
  const { maxBodyBytes, toleranceMs } = options;
  const path = new URL(req.url ?? '/', 'http://receiver').pathname;
  if (path !== options.path) return { status: 404, reason: `a POST to ${JSON.stringify(path.slice(0, 100))}, not to the webhook path ${options.path}` };
  if (Number(req.headers['content-length'] ?? 0) > maxBodyBytes) return overSize(maxBodyBytes);
  const signature = header(req, 'x-deapi-signature');
  const timestamp = header(req, 'x-deapi-timestamp');
  if (signature === undefined || !SIGNATURE.test(signature)) return { status: 401, reason: 'no X-DeAPI-Signature of the form sha256=<64 hex digits>' };
  if (timestamp === undefined || !TIMESTAMP.test(timestamp)) return { status: 401, reason: 'no X-DeAPI-Timestamp in Unix seconds' };
  const skewMs = Number(timestamp) * 1000 - options.nowMs();
  if (Math.abs(skewMs) <= toleranceMs) return undefined;
  return { status: 401, reason: `the timestamp is ${Math.round(Math.abs(skewMs) / 1000)} s in the ${skewMs < 0 ? 'past' : 'future'} (at most ${toleranceMs / 1000} s either way)` };
}

/**
 * The body; 'too-large' as soon as it passes `maxBytes`, from where nothing more is read or kept;
 * 'gone' when the sender hung up before its end.
 */
function readCapped(req: IncomingMessage, maxBytes: number): Promise<Buffer | 'too-large' | 'gone'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer): void => {
      total += chunk.length;
      if (total <= maxBytes) return void chunks.push(chunk);
      req.off('data', onData);
      req.pause();
      resolve('too-large');
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    // After 'end' these change nothing: a promise settles once.
    req.once('error', () => resolve('gone'));
    req.once('close', () => resolve('gone'));
  });
}

/** An answer given without reading (the rest of) the body: the connection goes once it is out. */
function refuse(req: IncomingMessage, res: ServerResponse, rejection: Rejection, headers: Record<string, string> = {}): void {
  res.once('finish', () => setImmediate(() => req.socket.destroy()));
  reply(res, rejection.status, { message: rejection.reason }, { ...headers, Connection: 'close' });
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function reply(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) });
  res.end(text);
}

function listen(server: ReturnType<typeof createServer>, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, host, port)));
    server.listen(port, host, () => resolve());
  });
}

/** What to do about a port that cannot be had, by the system's error code. */
const LISTEN_ADVICE: Record<string, string> = {
  EADDRINUSE:
    'another program already listens there; stop it or pick another port (and point your proxy or tunnel at it)',
  EACCES: 'not allowed to listen there (ports below 1024 need privileges); pick a port from 1024 up',
  EADDRNOTAVAIL: 'this machine has no such address; give one of its own (127.0.0.1 for a local proxy or tunnel)',
};

function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  const advice = LISTEN_ADVICE[error.code === 'ENOTFOUND' ? 'EADDRNOTAVAIL' : (error.code ?? '')];
  const what = advice ?? `cannot listen (${error.code ?? error.message})`;
  return new ConfigError(`--listen ${host}:${port}: ${what}. Nothing was sent.`, 'E_LISTEN', error);
}
