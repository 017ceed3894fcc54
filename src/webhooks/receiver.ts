/**
 * The webhook receiver: a plain HTTP server on the address a user's reverse proxy or tunnel
 * forwards to. It verifies every request before anything is settled: the path, the size, the
 * timestamp, the signature, and only then the body as JSON. What a verified delivery does is the
 * caller's business (`settle`); the answer goes out once that has resolved.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../errors.js';
import { readDelivery, type Delivery } from './delivery.js';
import { signatureMatches } from './signature.js';

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

export interface ReceiverOptions {
  host: string;
  port: number;
  /** Deliveries are taken on this path only (the webhook URL's). */
  path: string;
  /** Every secret a delivery may be signed with: the current run's and earlier runs'. */
  secrets: () => readonly WebhookSecret[];
  settle: (delivery: SignedDelivery) => Promise<Verdict>;
  onRejected: (rejection: Rejection) => void;
  /** Default 1 MiB. */
  maxBodyBytes?: number;
  /** How far a timestamp may be from now, either way. Default 300 000 (5 minutes). */
  toleranceMs?: number;
  nowMs?: () => number;
}

export interface Receiver {
  /** `host:port` as bound (a port 0 becomes the one the system gave). */
  address: string;
  close(): Promise<void>;
}

export const MAX_DELIVERY_BYTES = 1024 * 1024;
export const TIMESTAMP_TOLERANCE_MS = 300_000;
const SIGNATURE = /^sha256=[0-9a-f]{64}$/i;
const TIMESTAMP = /^\d{1,12}$/;

/** Listens on `host:port`; a port that cannot be had is a ConfigError (exit 4) naming it. */
export async function startReceiver(options: ReceiverOptions): Promise<Receiver> {
  const server = createServer((req, res) => {
    answer(options, req, res).catch((error: unknown) => {
      options.onRejected({ status: 500, reason: `the delivery could not be recorded: ${(error as Error).message}` });
      reply(res, 500, { message: 'the delivery could not be recorded; send it again' });
    });
  });
  // A client that trickles its headers or body must not hold a connection for long.
  server.headersTimeout = 10_000;
  server.requestTimeout = 15_000;
  await listen(server, options.host, options.port);
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return {
    address: `${host}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function answer(options: ReceiverOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const reject = (status: number, reason: string): void => {
    options.onRejected({ status, reason });
    reply(res, status, { message: reason });
  };
  if (req.method !== 'POST') return reply(res, 405, { message: 'deliveries are POSTed' }, { Allow: 'POST' });
  const path = new URL(req.url ?? '/', 'http://receiver').pathname;
  if (path !== options.path) return reject(404, `a POST to ${JSON.stringify(path.slice(0, 100))}, not to the webhook path ${options.path}`);

  const maxBytes = options.maxBodyBytes ?? MAX_DELIVERY_BYTES;
  const body = await readCapped(req, maxBytes);
  if (body === 'gone') return;
  if (body === 'too-large') return tooLarge(options, req, res, maxBytes);

  const signature = header(req, 'x-deapi-signature');
  const timestamp = header(req, 'x-deapi-timestamp');
  if (signature === undefined || !SIGNATURE.test(signature)) return reject(401, 'no X-DeAPI-Signature of the form sha256=<64 hex digits>');
  if (timestamp === undefined || !TIMESTAMP.test(timestamp)) return reject(401, 'no X-DeAPI-Timestamp in Unix seconds');
  const skewMs = Number(timestamp) * 1000 - (options.nowMs ?? Date.now)();
  const toleranceMs = options.toleranceMs ?? TIMESTAMP_TOLERANCE_MS;
  if (Math.abs(skewMs) > toleranceMs) {
    return reject(401, `the timestamp is ${Math.round(Math.abs(skewMs) / 1000)} s in the ${skewMs < 0 ? 'past' : 'future'} (at most ${toleranceMs / 1000} s either way)`);
  }
  // Each secret is tried in full: which one matched, or how nearly, takes no less time to learn.
  const lowered = signature.toLowerCase();
  const signer = options.secrets().find((candidate) => signatureMatches(lowered, candidate.secret, timestamp, body));
  if (signer === undefined) return reject(401, 'the signature matches no secret of this ledger');

  const delivery = readDelivery(body, header(req, 'x-deapi-delivery-id'));
  if ('problem' in delivery) return reject(400, delivery.problem);
  // The headers are not signed: one that contradicts the signed body was changed on the way.
  const idHeader = header(req, 'x-deapi-delivery-id');
  if (idHeader !== undefined && idHeader !== delivery.deliveryId) return reject(401, 'X-DeAPI-Delivery-Id differs from the signed delivery_id');
  const eventHeader = header(req, 'x-deapi-event');
  if (eventHeader !== undefined && eventHeader !== delivery.event) return reject(401, 'X-DeAPI-Event differs from the signed event');

  const verdict = await options.settle({ ...delivery, signedBy: signer.run });
  if (!verdict.ok) return reject(verdict.status, verdict.reason);
  reply(res, 200, { received: true, outcome: verdict.outcome });
}

/**
 * The body; 'too-large' once it passes `maxBytes`, from where nothing more is read or kept (a
 * 10 MB body costs at most the cap in memory); 'gone' when the sender hung up before its end.
 */
function readCapped(req: IncomingMessage, maxBytes: number): Promise<Buffer | 'too-large' | 'gone'> {
  if (Number(req.headers['content-length'] ?? 0) > maxBytes) return Promise.resolve('too-large');
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

/** 413, then the connection goes: the rest of the body is never read. */
function tooLarge(options: ReceiverOptions, req: IncomingMessage, res: ServerResponse, maxBytes: number): void {
  options.onRejected({ status: 413, reason: `the body is over ${maxBytes} bytes` });
  res.once('finish', () => setImmediate(() => req.socket.destroy()));
  reply(res, 413, { message: `deliveries are at most ${maxBytes} bytes` }, { Connection: 'close' });
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

function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  const where = `--listen ${host}:${port}`;
  if (error.code === 'EADDRINUSE') {
    return new ConfigError(`${where}: another program already listens there; stop it or pick another port (and point your proxy or tunnel at it). Nothing was sent.`, 'E_LISTEN', error);
  }
  if (error.code === 'EACCES') {
    return new ConfigError(`${where}: not allowed to listen there (ports below 1024 need privileges); pick a port from 1024 up. Nothing was sent.`, 'E_LISTEN', error);
  }
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') {
    return new ConfigError(`${where}: this machine has no such address; give one of its own (127.0.0.1 for a local proxy or tunnel). Nothing was sent.`, 'E_LISTEN', error);
  }
  return new ConfigError(`${where}: cannot listen (${error.code ?? error.message}). Nothing was sent.`, 'E_LISTEN', error);
}

export type { Delivery };
