import { readFileSync } from 'node:fs';
import { request as httpRequest, createServer, type IncomingHttpHeaders, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ROOT } from '../helpers/cli.js';

/**
 * A self-signed certificate for localhost and 127.0.0.1 (valid until 2126), made for these tests
 * with openssl. A CLI child process trusts it through NODE_EXTRA_CA_CERTS=TEST_CA_FILE.
 */
export const TEST_CA_FILE = path.join(ROOT, 'test/fixtures/tls/localhost.crt');
const TEST_KEY_FILE = path.join(ROOT, 'test/fixtures/tls/localhost.key');

/** One request a scripted server received: enough to prove what was (not) sent to it. */
export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body: string | Buffer;
}

export interface Scripted {
  url: string;
  port: number;
  received: Received[];
  close: () => Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, reply: Reply): void {
  res.writeHead(reply.status, reply.headers ?? { 'content-type': 'application/json' });
  res.end(reply.body);
}

/**
 * A node:http server on 127.0.0.1:0 answering with `handle`; every request is recorded. With
 * `tls`, an https server with the test certificate.
 */
export async function startScripted(
  handle: (req: Received, res: ServerResponse) => Promise<Reply | undefined> | Reply | undefined,
  options: { tls?: boolean } = {},
): Promise<Scripted> {
  const received: Received[] = [];
  const listener: RequestListener = (req, res) => {
    void (async () => {
      const entry: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: await readBody(req) };
      received.push(entry);
      const reply = await handle(entry, res);
      if (reply !== undefined) send(res, reply);
    })().catch((error: unknown) => {
      if (!res.headersSent) send(res, { status: 599, body: String(error) });
      else res.destroy();
    });
  };
  const server: Server = options.tls
    ? createHttpsServer({ key: readFileSync(TEST_KEY_FILE), cert: readFileSync(TEST_CA_FILE) }, listener)
    : createServer(listener);
  server.keepAliveTimeout = 100;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Forwards a recorded request to `target` (one connection per request, nothing kept alive). */
export function forward(target: string, req: Received): Promise<Reply> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || ['host', 'connection', 'content-length', 'keep-alive'].includes(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const body = Buffer.from(req.body, 'utf8');
  if (body.length > 0) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const out = httpRequest(`${target}${req.url}`, { method: req.method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const replyHeaders: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) {
          if (value === undefined || ['connection', 'transfer-encoding', 'content-length', 'keep-alive'].includes(name)) continue;
          replyHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        resolve({ status: res.statusCode ?? 502, headers: replyHeaders, body: Buffer.concat(chunks) });
      });
      res.on('error', reject);
    });
    out.on('error', reject);
    out.end(body);
  });
}

const SUBMIT = /^\/api\/v1\/client\/(txt2audio|img2video)$/;
const STATUS = /^\/api\/v1\/client\/request-status\/([^/?]+)/;

export interface ProxyScript {
  /** Answer a submit of the job whose text is `text` instead of the service; undefined forwards it. */
  submit?: (text: string, req: Received) => Reply | undefined;
  /** Answer any request instead of the service; undefined goes on. */
  any?: (req: Received) => Reply | undefined;
  /** The result URL to give, once the service says done, for the job whose text is `text`. */
  resultUrl?: (text: string, original: string) => string;
}

/**
 * A scripted service: a proxy in front of the simulator (which supplies models, prices, balance
 * and the job lifecycle) that answers some calls itself, as a hostile or broken service would.
 */
export async function startProxy(simUrl: string, script: ProxyScript): Promise<Scripted> {
  const textOf = new Map<string, string>();
  return startScripted(async (req) => {
    const own = script.any?.(req);
    if (own !== undefined) return own;
    const path = req.url.split('?')[0] ?? '';
    if (req.method === 'POST' && SUBMIT.test(path)) {
      const text = String((JSON.parse(req.body || '{}') as { text?: unknown }).text ?? '');
      const scripted = script.submit?.(text, req);
      if (scripted !== undefined) return scripted;
      const reply = await forward(simUrl, req);
      const requestId = (JSON.parse(reply.body.toString()) as { data?: { request_id?: string } }).data?.request_id;
      if (requestId !== undefined) textOf.set(requestId, text);
      return reply;
    }
    const status = STATUS.exec(path);
    if (req.method === 'GET' && status !== null && script.resultUrl !== undefined) {
      const reply = await forward(simUrl, req);
      const doc = JSON.parse(reply.body.toString()) as { data?: { status?: string; result_url?: string } };
      const text = textOf.get(status[1] ?? '');
      if (doc.data?.status === 'done' && text !== undefined) {
        doc.data.result_url = script.resultUrl(text, doc.data.result_url ?? '');
        return { status: reply.status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(doc) };
      }
      return reply;
    }
    return forward(simUrl, req);
  });
}

/** A manifest of speech jobs, one per text, with ids `ids[i]`. */
export function speechManifest(jobs: { id: string; text: string }[]): string {
  return [
    'version: 1',
    'budget: 5',
    'defaults:',
    '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: wav, sample_rate: 24000 }',
    'jobs:',
    ...jobs.map((job) => `  - { id: ${job.id}, type: txt2audio, text: "${job.text}" }`),
    '',
  ].join('\n');
}
