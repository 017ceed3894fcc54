import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver, type ReceiverOptions, type SignedDelivery } from '../../src/webhooks/receiver.js';
import { deliveryBody, HOOK_PATH, post, signed, until } from './helpers.js';

const SECRET = 'r'.repeat(64);
/** Long enough that nothing in a test is closed by a timeout it does not set short. */
const LONG_MS = 60_000;

/** A raw client socket, and whether the receiver has closed it and what it answered. */
interface Raw {
  socket: Socket;
  received: () => string;
  closed: () => boolean;
}

async function open(address: string): Promise<Raw> {
  const [host, port] = address.split(':');
  const socket = connect(Number(port), host);
  let received = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, received: () => received, closed: () => closed };
}

/** Writes `text` one byte at a time, every 20 ms, until the socket is closed. */
function trickle(raw: Raw, text: string): void {
  let at = 0;
  const timer = setInterval(() => {
    if (raw.closed() || at >= text.length) return void clearInterval(timer);
    raw.socket.write(text[at]!);
    at += 1;
  }, 20);
}

/** Headers of the right form (a signature no secret makes, a fresh timestamp): what is refused only after the body. */
function wellFormed(contentLength: number | 'chunked'): string {
  const length = contentLength === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${contentLength}`;
  return `POST ${HOOK_PATH} HTTP/1.1\r\nHost: receiver\r\nX-DeAPI-Signature: sha256=${'ab'.repeat(32)}\r\nX-DeAPI-Timestamp: ${Math.floor(Date.now() / 1000)}\r\n${length}\r\n\r\n`;
}

describe('the webhook receiver holds its limits against hostile clients', () => {
  let receiver: Receiver | undefined;
  const sockets: Raw[] = [];
  const applied: SignedDelivery[] = [];
  afterEach(async () => {
    for (const raw of sockets.splice(0)) raw.socket.destroy();
    applied.length = 0;
    await receiver?.close();
  });

  const start = async (options: Partial<ReceiverOptions>): Promise<string> => {
    receiver = await startReceiver({
      host: '127.0.0.1',
      port: 0,
      path: HOOK_PATH,
      secrets: () => [{ run: 1, secret: SECRET }],
      settle: (delivery) => {
        applied.push(delivery);
        return Promise.resolve({ ok: true, outcome: 'applied' });
      },
      onRejected: () => undefined,
      headersTimeoutMs: LONG_MS,
      requestTimeoutMs: LONG_MS,
      ...options,
    });
    return receiver.address;
  };
  const raw = async (address: string): Promise<Raw> => {
    const opened = await open(address);
    sockets.push(opened);
    return opened;
  };

  it('refuses on the headers alone, before any of the body is sent, and closes the connection', async () => {
    const address = await start({});
    const unsigned = await raw(address);
    unsigned.socket.write(`POST ${HOOK_PATH} HTTP/1.1\r\nHost: receiver\r\nX-DeAPI-Timestamp: ${Math.floor(Date.now() / 1000)}\r\nContent-Length: 1000\r\n\r\n`);
    const stale = await raw(address);
    stale.socket.write(wellFormed(1000).replace(/X-DeAPI-Timestamp: \d+/, `X-DeAPI-Timestamp: ${Math.floor(Date.now() / 1000) - 3600}`));
    await until(() => unsigned.closed() && stale.closed());
    expect(unsigned.received()).toMatch(/^HTTP\/1\.1 401 /);
    expect(stale.received()).toMatch(/^HTTP\/1\.1 401 /);
  });

  it('answers 413 as soon as a body passes the limit, without waiting for its end', async () => {
    const address = await start({ maxBodyBytes: 1024 });
    const big = await raw(address);
    big.socket.write(wellFormed('chunked'));
    big.socket.write(`800\r\n${'x'.repeat(2048)}\r\n`);
    await until(() => big.closed());
    expect(big.received()).toMatch(/^HTTP\/1\.1 413 /);
  });

  it('closes a silent client, one trickling its headers and one trickling its body, on the timeouts it was given', async () => {
    const address = await start({ headersTimeoutMs: 200, requestTimeoutMs: 400 });
    const silent = await raw(address);
    const slowHeaders = await raw(address);
    trickle(slowHeaders, wellFormed(10));
    const slowBody = await raw(address);
    slowBody.socket.write(wellFormed(1000));
    trickle(slowBody, 'x'.repeat(1000));
    await until(() => silent.closed() && slowHeaders.closed() && slowBody.closed());
    expect(applied).toEqual([]);
  });

  it('past its connection cap pushes out the oldest held-open sockets, and a real delivery is applied', async () => {
    const address = await start({ maxConnections: 4 });
    const held: Raw[] = [];
    for (let i = 0; i < 8; i += 1) {
      const socket = await raw(address);
      socket.socket.write(`POST ${HOOK_PATH} HTTP/1.1\r\n`);
      held.push(socket);
    }
    const body = deliveryBody('job.completed', 'req-1', 'd-real');
    expect((await post(address, body, signed(SECRET, body))).status).toBe(200);
    expect(applied.map((d) => d.deliveryId)).toEqual(['d-real']);
    // Eight held open and one delivery against four places: the five oldest went, the newest stay.
    await until(() => held.filter((s) => s.closed()).length >= 5);
    expect(held.map((s) => s.closed())).toEqual([true, true, true, true, true, false, false, false]);
  });
});
