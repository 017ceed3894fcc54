import { existsSync, readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServiceClient } from '../../src/api/client.js';
import { loadManifest } from '../../src/manifest/load.js';
import { createRunContext, DEFAULT_RETRY, SIMULATOR_POLL, type RunEvent } from '../../src/runner/context.js';
import { Pace } from '../../src/runner/pace.js';
import { runManifest } from '../../src/runner/run.js';
import { startSimulator, type Simulator } from '../../src/sim/index.js';
import { openLedger } from '../../src/store/index.js';
import { hasStackTrace, runCli, tempDir } from '../helpers/cli.js';
import { speechManifest, startProxy, startScripted, type Reply, type Scripted } from './servers.js';
import { builtThreadWriter } from '../helpers/writer.js';

const TOKEN = 'mbtok-RESULTHOST-5be0c7d9a1';
const FAST = { token: TOKEN, pendingMs: { txt2audio: 10, img2video: 10 }, processingMs: { txt2audio: 20, img2video: 20 } };
const WAV = Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'), Buffer.alloc(64, 1)]);

interface StatusDoc {
  counts: Record<string, number>;
  jobs: { id: string; state: string; output: string | null; error: string | null }[];
}

/** Every file under `dir`, relative, sorted. */
function tree(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? tree(path.join(dir, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`]))
    .sort();
}

/** A storage host: serves results, redirects, and oversized bodies; it records every request. */
async function startResultHost(otherUrl: () => string): Promise<Scripted> {
  const host: Scripted = await startScripted((req, res): Reply | undefined => {
    const route = req.url.split('?')[0];
    if (route === '/ok.wav') return { status: 200, headers: { 'content-type': 'audio/wav' }, body: WAV };
    if (route === '/redirect-port.wav') return { status: 302, headers: { location: `${otherUrl()}/stolen.wav?sig=1` }, body: '' };
    if (route === '/redirect-host.wav') return { status: 302, headers: { location: `http://localhost:${host.port}/ok.wav` }, body: '' };
    if (route === '/big-declared.wav') {
      return { status: 200, headers: { 'content-type': 'audio/wav', 'content-length': '5000' }, body: Buffer.alloc(5000, 7) };
    }
    if (route === '/big-chunked.wav') {
      // No Content-Length: the limit must hold while streaming.
      res.writeHead(200, { 'content-type': 'audio/wav' });
      for (let i = 0; i < 10; i += 1) res.write(Buffer.alloc(500, i));
      res.end();
      return undefined;
    }
    return { status: 404, body: 'no' };
  });
  return host;
}

describe('result URLs the runner refuses', () => {
  let sim: Simulator;
  let servers: Scripted[];
  let dir: string;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir('mediabatch-results-'));
    servers = [];
    sim = await startSimulator(FAST);
  });
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await sim.close();
    await cleanup();
  });

  async function hosts(urlFor: (text: string, host: Scripted, other: Scripted) => string): Promise<{ proxy: Scripted; host: Scripted; other: Scripted }> {
    const other = await startScripted(() => ({ status: 200, headers: { 'content-type': 'audio/wav' }, body: WAV }));
    const host = await startResultHost(() => other.url);
    const proxy = await startProxy(sim.url, { resultUrl: (text) => urlFor(text, host, other) });
    servers.push(other, host, proxy);
    return { proxy, host, other };
  }

  it('file://, ftp:// and redirects to another port or host: failed with a reason, nothing written, no token sent', async () => {
    const { proxy, host, other } = await hosts((text, h) => {
      if (text === 'file') return 'file:///etc/passwd';
      if (text === 'ftp') return `ftp://127.0.0.1:${h.port}/ok.wav`;
      if (text === 'data') return 'data:audio/wav;base64,UklGRg==';
      if (text === 'port') return `${h.url}/redirect-port.wav?sig=abc`;
      if (text === 'host') return `${h.url}/redirect-host.wav?sig=abc`;
      return `${h.url}/ok.wav?sig=abc`;
    });
    const file = path.join(dir, 'batch.yaml');
    await writeFile(
      file,
      speechManifest(['good', 'file', 'ftp', 'data', 'port', 'host'].map((name) => ({ id: `job-${name}`, text: name }))),
    );
    const run = await runCli(['run', file, '--json', '--base-url', proxy.url, '--plan', 'unlimited', '--poll-ms', '50'], { env: { MEDIABATCH_TOKEN: TOKEN } });
    expect(run.code, run.stderr).toBe(1);
    expect(hasStackTrace(run.stderr)).toBe(false);

    const status = await runCli(['status', file, '--json']);
    const doc = JSON.parse(status.stdout) as StatusDoc;
    const byId = new Map(doc.jobs.map((job) => [job.id, job]));
    expect(byId.get('job-good')).toMatchObject({ state: 'done', output: path.join(dir, 'batch.out', 'job-good.wav') });
    const reasons: Record<string, RegExp> = {
      'job-file': /only http and https result URLs are fetched, got file:/,
      'job-ftp': /only http and https result URLs are fetched, got ftp:/,
      'job-data': /only http and https result URLs are fetched, got data:/,
      'job-port': /redirected to another origin \(http:\/\/127\.0\.0\.1:\d+\); refusing to follow/,
      'job-host': /redirected to another origin \(http:\/\/localhost:\d+\); refusing to follow/,
    };
    for (const [id, reason] of Object.entries(reasons)) {
      const job = byId.get(id);
      expect(job?.state, id).toBe('failed');
      expect(job?.output, id).toBeNull();
      expect(job?.error, id).toMatch(reason);
      // The signature (query string) of a pre-signed URL is a credential: never recorded.
      expect(job?.error, id).not.toContain('sig=');
    }
    // Only the good result was written; nothing left as .part, nothing beside the manifest.
    expect(tree(dir).filter((f) => !/-(wal|shm)$/.test(f))).toEqual(['batch.mediabatch.db', 'batch.out/job-good.wav', 'batch.run.csv', 'batch.run.json', 'batch.yaml']);
    // The result host never saw the token; the host redirected to was never contacted.
    expect(host.received.map((r) => r.url.split('?')[0]).sort()).toEqual(['/ok.wav', '/redirect-host.wav', '/redirect-port.wav']);
    for (const req of host.received) expect(req.headers.authorization).toBeUndefined();
    expect(other.received).toEqual([]);
    expect(proxy.received.every((r) => r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
  });

  it('a result over the size limit (declared, or only found while streaming) is refused and leaves no file', async () => {
    const { proxy, host } = await hosts((text, h) => `${h.url}/${text}.wav?sig=abc`);
    const file = path.join(dir, 'big.yaml');
    await writeFile(file, speechManifest(['ok', 'big-declared', 'big-chunked'].map((name) => ({ id: name, text: name }))));
    const outDir = path.join(dir, 'big.out');
    const ledger = openLedger(path.join(dir, 'big.mediabatch.db'));
    const client = createServiceClient({ baseUrl: proxy.url, token: TOKEN });
    const writer = builtThreadWriter(ledger.path);
    const halt = new AbortController();
    const events: RunEvent[] = [];
    try {
      const ctx = createRunContext({
        client,
        ledger,
        writer,
        pace: new Pace({}),
        options: {
          concurrency: 4,
          budgetUsd: null,
          noWait: false,
          resubmitInDoubt: false,
          outDir,
          poll: SIMULATOR_POLL,
          retry: { ...DEFAULT_RETRY, minDelayMs: 10, maxDelayMs: 50 },
          // Small enough for a test; the CLI's is 110 MB.
          maxResultBytes: 1000,
        },
        stop: halt.signal,
        emit: (event) => events.push(event),
      });
      await runManifest({ manifest: await loadManifest(file), ctx, baseUrl: proxy.url, partial: false, userStop: halt.signal, halt });
    } finally {
      await client.close();
      await writer.close();
      ledger.close();
    }
    const status = await runCli(['status', file, '--json']);
    const doc = JSON.parse(status.stdout) as StatusDoc;
    const byId = new Map(doc.jobs.map((job) => [job.id, job]));
    expect(byId.get('ok')?.state).toBe('done');
    expect(byId.get('big-declared')).toMatchObject({ state: 'failed', output: null });
    expect(byId.get('big-declared')?.error).toMatch(/larger than the limit of 1000 bytes \(Content-Length 5000\)/);
    expect(byId.get('big-chunked')).toMatchObject({ state: 'failed', output: null });
    expect(byId.get('big-chunked')?.error).toMatch(/larger than the limit of 1000 bytes \(more than \d+ bytes sent\)/);
    expect(events.filter((e) => e.kind === 'failed').map((e) => (e as { id: string }).id).sort()).toEqual(['big-chunked', 'big-declared']);
    expect(tree(outDir)).toEqual(['ok.wav']);
    expect(existsSync(path.join(outDir, 'big-chunked.wav.part'))).toBe(false);
    for (const req of host.received) expect(req.headers.authorization).toBeUndefined();
  });
});
