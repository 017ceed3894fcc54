import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './measure.js';

const CONNECTIONS = 300;
const BODY_BYTES = 1024 * 1024 - 1;
const SECRET = 'f'.repeat(64);
const HOOK = '/hook';

export interface FloodFigures {
  connections: number;
  /** Per attack: the receiver's resident set before it, its peak above that, and a real delivery's answer during it. */
  unsigned: Attacked;
  forged: Attacked;
}

interface Attacked {
  baselineRssMb: number;
  peakAboveMb: number;
  realDelivery: number | undefined;
}

/**
 * The receiver alone in a child process, flooded by 300 connections that each send headers and
 * a body one byte short of 1 MiB and then hold the socket open: unsigned, or with a signature of
 * the right form that no secret makes (so the body is read before it can be refused). During
 * each flood one real signed delivery is sent; its status is reported.
 */
export async function webhookFlood(): Promise<FloodFigures> {
  return { connections: CONNECTIONS, unsigned: await flood(false), forged: await flood(true) };
}

async function flood(wellFormed: boolean): Promise<Attacked> {
  const { child, address } = await startChild();
  const [host, port] = address.split(':') as [string, string];
  const sockets: Socket[] = [];
  const headers = (signature: string): string =>
    `POST ${HOOK} HTTP/1.1\r\nHost: receiver\r\nX-DeAPI-Timestamp: ${Math.floor(Date.now() / 1000)}\r\n${signature}Content-Length: ${BODY_BYTES + 1}\r\n\r\n`;
  const body = Buffer.alloc(BODY_BYTES, 0x7b);
  try {
    const baselineRssMb = await rssMb(child, 'VmRSS');
    for (let i = 0; i < CONNECTIONS; i += 1) {
      const socket = connect(Number(port), host);
      socket.on('error', () => undefined);
      socket.write(headers(wellFormed ? `X-DeAPI-Signature: sha256=${'ab'.repeat(32)}\r\n` : ''));
      socket.write(body);
      sockets.push(socket);
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const realDelivery = await deliver(address);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    return { baselineRssMb, peakAboveMb: (await rssMb(child, 'VmHWM')) - baselineRssMb, realDelivery };
  } finally {
    for (const socket of sockets) socket.destroy();
    child.kill();
  }
}

function deliver(address: string): Promise<number | undefined> {
  const body = JSON.stringify({ event: 'job.completed', delivery_id: `d-${Date.now()}`, data: { job_request_id: 'r-1' } });
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = `sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${body}`).digest('hex')}`;
  return new Promise((resolve) => {
    const req = request(`http://${address}${HOOK}`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'x-deapi-signature': signature, 'x-deapi-timestamp': timestamp } }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode));
    });
    req.setTimeout(10_000, () => req.destroy());
    req.once('error', () => resolve(undefined));
    req.end(body);
  });
}

async function startChild(): Promise<{ child: ChildProcess; address: string }> {
  const receiver = pathToFileURL(path.join(ROOT, 'dist/src/webhooks/receiver.js')).href;
  const code = `
    const { startReceiver } = await import(${JSON.stringify(receiver)});
    const receiver = await startReceiver({ host: '127.0.0.1', port: 0, path: ${JSON.stringify(HOOK)}, secrets: () => [{ run: 1, secret: ${JSON.stringify(SECRET)} }],
      settle: async () => ({ ok: true, outcome: 'applied' }), onRejected: () => undefined });
    process.stdout.write(receiver.address + '\\n');`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const address = await new Promise<string>((resolve, reject) => {
    child.stdout?.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`the receiver exited (${code})`)));
  });
  // Let start-up settle before the baseline is read.
  await new Promise((resolve) => setTimeout(resolve, 500));
  return { child, address };
}

async function rssMb(child: ChildProcess, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
}
