/**
 * A real HTTP server on 127.0.0.1:0 that answers an exact script, one reply per request,
 * and records every request it received (method, url, headers, body, arrival time).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  /** A string or Buffer is sent as is; anything else as JSON. */
  body?: unknown;
  /** Wait before sending the headers. */
  delayMs?: number;
  /** Send the headers and this much of the body, then stall for `stallMs` before the rest. */
  partialBody?: string;
  stallMs?: number;
  /** With `partialBody`: after the stall, close the connection instead of sending the rest. */
  hangUp?: boolean;
  /** Read the whole request, then destroy the socket without answering. */
  reset?: boolean;
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  arrivedAtMs: number;
}

export type Script = Reply[] | ((request: RecordedRequest, index: number) => Reply);

export interface ScriptedServer {
  url: string;
  origin: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function encode(body: unknown): { bytes: Buffer; json: boolean } {
  if (body === undefined) return { bytes: Buffer.alloc(0), json: false };
  if (Buffer.isBuffer(body)) return { bytes: body, json: false };
  if (typeof body === 'string') return { bytes: Buffer.from(body), json: false };
  return { bytes: Buffer.from(JSON.stringify(body)), json: true };
}

export async function startScriptedServer(script: Script): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const arrivedAtMs = Date.now();
    const body = await readBody(request);
    const recorded = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body, arrivedAtMs };
    const index = requests.push(recorded) - 1;
    const reply: Reply = (Array.isArray(script) ? script[index] : script(recorded, index)) ?? {
      status: 599,
      body: { message: `script has no reply for request ${index + 1}` },
    };
    if (reply.reset) {
      request.socket.destroy();
      return;
    }
    if (reply.delayMs) await wait(reply.delayMs);
    if (response.destroyed) return;
    const { bytes, json } = encode(reply.body);
    const headers = { ...(json ? { 'content-type': 'application/json' } : {}), ...reply.headers };
    if (reply.partialBody !== undefined) {
      response.writeHead(reply.status ?? 200, headers);
      response.write(reply.partialBody);
      await wait(reply.stallMs ?? 0);
      if (reply.hangUp) {
        response.socket?.destroy();
        return;
      }
      if (!response.destroyed) response.end(bytes);
      return;
    }
    response.writeHead(reply.status ?? 200, { 'content-length': String(bytes.length), ...headers });
    response.end(bytes);
  }

  const server = createServer((request, response) => {
    answer(request, response).catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    url: origin,
    origin,
    requests,
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port with nothing listening on it: connecting is refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
