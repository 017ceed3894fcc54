import { existsSync, readdirSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/index.js';
import { hasStackTrace, runCli, tempDir } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { DEFAULT_MAX_RESULT_BYTES } from '../../src/runner/index.js';
import { runInProcess, runInProcessResult, type InProcessRun } from '../helpers/in-process.js';
import { speechManifest, startProxy, startScripted, TEST_CA_FILE, type Reply, type Scripted } from './servers.js';

const TOKEN = 'mbtok-RESULTHOST-5be0c7d9a1';
const FAST = { token: TOKEN, pendingMs: { txt2audio: 10, img2video: 10 }, processingMs: { txt2audio: 20, img2video: 20 } };
/** A WAV header and `bytes` of silence: what a speech result looks like, at any size. */
const wav = (bytes = 64): Buffer => Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'), Buffer.alloc(bytes, 1)]);
const WAV = wav();

interface StatusDoc {
  counts: Record<string, number>;
  jobs: { id: string; state: string; request_id: string | null; output: string | null; error: string | null; collect_issue: string | null }[];
}

/** The jobs of a run's `.run.json` (the document `status --json` prints), by id. */
async function statusOf(runJson: string): Promise<Map<string, StatusDoc['jobs'][number]>> {
  return new Map((JSON.parse(await readFile(runJson, 'utf8')) as StatusDoc).jobs.map((job) => [job.id, job]));
}

/** A run in this process that must end without a fatal error; its `.run.json` is `${outDir}.run.json`. */
async function runHere(input: InProcessRun): Promise<void> {
  const { result } = await runInProcessResult(input);
  expect(result.outcome?.execute.fatal).toBeUndefined();
}

/** Every file under `dir`, relative, sorted. */
function tree(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? tree(path.join(dir, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`]))
    .sort();
}

/** A storage host: serves results, redirects, and oversized bodies; it records every request. */
async function startResultHost(otherUrl: () => string, cdnUrl: () => string): Promise<Scripted> {
  const host: Scripted = await startScripted((req, res): Reply | undefined => {
    const route = req.url.split('?')[0];
    if (route === '/ok.wav') return { status: 200, headers: { 'content-type': 'audio/wav' }, body: WAV };
    if (route === '/redirect-port.wav') return { status: 302, headers: { location: `${otherUrl()}/stolen.wav?sig=1` }, body: '' };
    if (route === '/redirect-host.wav') return { status: 302, headers: { location: `http://localhost:${host.port}/ok.wav` }, body: '' };
    if (route === '/redirect-cdn.wav') return { status: 302, headers: { location: `${cdnUrl()}/ok.wav?sig=cdn` }, body: '' };
    if (route === '/redirect-ftp-hop.wav') return { status: 302, headers: { location: `ftp://127.0.0.1:${host.port}/ok.wav?sig=1` }, body: '' };
    if (route === '/big-declared.wav') {
      return { status: 200, headers: { 'content-type': 'audio/wav', 'content-length': '5000' }, body: wav(5000 - 16) };
    }
    if (route === '/big-chunked.wav') {
      // No Content-Length: the limit must hold while streaming.
      res.writeHead(200, { 'content-type': 'audio/wav' });
      res.write(wav(0));
      for (let i = 0; i < 10; i += 1) res.write(Buffer.alloc(500, i));
      res.end();
      return undefined;
    }
    if (route === '/error-page.wav') {
      return { status: 200, headers: { 'content-type': 'text/html' }, body: '<!DOCTYPE html><html><body><h1>Bandwidth exceeded</h1></body></html>' };
    }
    if (route === '/one-and-a-half-mb.wav') return { status: 200, headers: { 'content-type': 'audio/wav' }, body: wav(1.5 * 1024 * 1024) };
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

  async function hosts(urlFor: (text: string, host: Scripted) => string): Promise<{ proxy: Scripted; host: Scripted; other: Scripted; cdn: Scripted }> {
    const other = await startScripted(() => ({ status: 200, headers: { 'content-type': 'audio/wav' }, body: WAV }));
    const cdn = await startScripted(() => ({ status: 200, headers: { 'content-type': 'audio/wav' }, body: WAV }), { tls: true });
    const host = await startResultHost(() => other.url, () => cdn.url);
    const proxy = await startProxy(sim.url, { resultUrl: (text) => urlFor(text, host) });
    servers.push(other, cdn, host, proxy);
    return { proxy, host, other, cdn };
  }

  it('odd schemes and redirects to plain http elsewhere: left to collect with a reason, nothing written, no token sent; the next run collects', async () => {
    let recovered = false;
    const { proxy, host, other, cdn } = await hosts((text, h) => {
      if (recovered || text === 'good') return `${h.url}/ok.wav?sig=abc`;
      if (text === 'file') return 'file:///etc/passwd';
      if (text === 'ftp') return `ftp://127.0.0.1:${h.port}/ok.wav`;
      if (text === 'data') return 'data:audio/wav;base64,UklGRg==';
      return `${h.url}/redirect-${text}.wav?sig=abc`;
    });
    const file = path.join(dir, 'batch.yaml');
    const names = ['good', 'file', 'ftp', 'data', 'port', 'host', 'cdn', 'ftp-hop'];
    await writeFile(file, speechManifest(names.map((name) => ({ id: `job-${name}`, text: name }))));
    const args = ['run', file, '--json', '--base-url', proxy.url, '--plan', 'unlimited', '--poll-ms', '50'];
    // The https hop's server has a certificate of the tests' own: the CLI trusts it like a real CA.
    const env = { MEDIABATCH_TOKEN: TOKEN, NODE_EXTRA_CA_CERTS: TEST_CA_FILE };
    const run = await runCli(args, { env });
    expect(run.code, run.stderr).toBe(1);
    expect(hasStackTrace(run.stderr)).toBe(false);

    const byId = await statusOf(path.join(dir, 'batch.run.json'));
    expect(byId.get('job-good')).toMatchObject({ state: 'done', output: path.join(dir, 'batch.out', 'job-good.wav') });
    // Storage and CDN hops are normal for pre-signed URLs: another https origin is followed.
    expect(byId.get('job-cdn')).toMatchObject({ state: 'done', output: path.join(dir, 'batch.out', 'job-cdn.wav') });
    const reasons: Record<string, RegExp> = {
      'job-file': /only http and https result URLs are fetched, got file:/,
      'job-ftp': /only http and https result URLs are fetched, got ftp:/,
      'job-data': /only http and https result URLs are fetched, got data:/,
      'job-port': /redirected to plain http on another origin \(http:\/\/127\.0\.0\.1:\d+\)/,
      'job-host': /redirected to plain http on another origin \(http:\/\/localhost:\d+\)/,
      'job-ftp-hop': /redirected to a ftp: URL; only http and https results are fetched/,
    };
    for (const [id, reason] of Object.entries(reasons)) {
      const job = byId.get(id);
      // Paid for, its result not collected: it stays submitted, to be collected later.
      expect(job?.state, id).toBe('submitted');
      expect(job?.collect_issue, id).toBe('not_collected');
      expect(job?.request_id, id).toMatch(/^[0-9a-f-]{36}$/);
      expect(job?.output, id).toBeNull();
      expect(job?.error, id).toMatch(reason);
      // The signature (query string) of a pre-signed URL is a credential: never recorded.
      expect(job?.error, id).not.toContain('sig=');
    }
    const text = await mainInProcess(['status', file]);
    expect(text.stdout).toContain('Paid, result not collected: 6 job(s)');
    for (const id of Object.keys(reasons)) expect(text.stdout).toContain(byId.get(id)?.request_id ?? '?');
    expect(text.stdout).not.toContain('still running at the service');
    // Only the collected results were written; nothing left as .part, nothing beside the manifest.
    expect(tree(dir).filter((f) => !/-(wal|shm)$/.test(f))).toEqual([
      'batch.mediabatch.db',
      'batch.out/job-cdn.wav',
      'batch.out/job-good.wav',
      'batch.report.html',
      'batch.run.csv',
      'batch.run.json',
      'batch.yaml',
    ]);
    // No result host saw the token; the plain-http host redirected to was never contacted.
    expect(host.received.map((r) => r.url.split('?')[0]).sort()).toEqual([
      '/ok.wav',
      '/redirect-cdn.wav',
      '/redirect-ftp-hop.wav',
      '/redirect-host.wav',
      '/redirect-port.wav',
    ]);
    expect(cdn.received.map((r) => r.url)).toEqual(['/ok.wav?sig=cdn']);
    for (const req of [...host.received, ...cdn.received]) expect(req.headers.authorization).toBeUndefined();
    expect(other.received).toEqual([]);
    expect(proxy.received.every((r) => r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);

    // The service mends its URLs: the next run collects every paid result, sending nothing again.
    recovered = true;
    const outDir = path.join(dir, 'batch.out');
    await runHere({ manifest: file, ledgerPath: path.join(dir, 'batch.mediabatch.db'), outDir, baseUrl: proxy.url, token: TOKEN });
    for (const job of (await statusOf(`${outDir}.run.json`)).values()) expect(job, job.id).toMatchObject({ state: 'done', error: null, collect_issue: null });
    expect(sim.stats.accepted).toHaveLength(names.length);
  });

  it('a result over the size limit (declared, or only found while streaming) is left to collect, and a later run with a higher limit collects it', async () => {
    const { proxy, host } = await hosts((text, h) => `${h.url}/${text}.wav?sig=abc`);
    const file = path.join(dir, 'big.yaml');
    await writeFile(file, speechManifest(['ok', 'big-declared', 'big-chunked'].map((name) => ({ id: name, text: name }))));
    const outDir = path.join(dir, 'big.out');
    // Small enough for a test; the CLI's default is 110 MB (--max-result-mb).
    const events = await runInProcess({
      manifest: file,
      ledgerPath: path.join(dir, 'big.mediabatch.db'),
      outDir,
      baseUrl: proxy.url,
      token: TOKEN,
      options: { maxResultBytes: 1000 },
    });
    const byId = await statusOf(`${outDir}.run.json`);
    expect(byId.get('ok')?.state).toBe('done');
    expect(byId.get('big-declared')).toMatchObject({ state: 'submitted', collect_issue: 'not_collected', output: null });
    expect(byId.get('big-declared')?.error).toMatch(/larger than the limit of 1000 bytes \(Content-Length 5000\); if that size is expected, run again with a higher --max-result-mb/);
    expect(byId.get('big-chunked')).toMatchObject({ state: 'submitted', collect_issue: 'not_collected', output: null });
    expect(byId.get('big-chunked')?.error).toMatch(/larger than the limit of 1000 bytes \(more than \d+ bytes sent\)/);
    const warnings = events.flatMap((e) => (e.kind === 'warning' ? [e.message] : []));
    expect(warnings.filter((m) => m.includes('paid result not collected'))).toHaveLength(2);
    expect(events.filter((e) => e.kind === 'failed')).toEqual([]);
    expect(tree(outDir)).toEqual(['ok.wav']);
    expect(existsSync(path.join(outDir, 'big-chunked.wav.part'))).toBe(false);
    for (const req of host.received) expect(req.headers.authorization).toBeUndefined();

    // The CLI's limit is far above 5000 bytes: the next run collects both, sending nothing again.
    await runHere({ manifest: file, ledgerPath: path.join(dir, 'big.mediabatch.db'), outDir, baseUrl: proxy.url, token: TOKEN, options: { maxResultBytes: DEFAULT_MAX_RESULT_BYTES } });
    expect((await statusOf(`${outDir}.run.json`)).get('big-chunked')).toMatchObject({ state: 'done', error: null });
    expect(tree(outDir)).toEqual(['big-chunked.wav', 'big-declared.wav', 'ok.wav']);
    expect(sim.stats.accepted).toHaveLength(3);
  });

  it('an HTML page served with 200 is not a result: nothing is saved, the job stays submitted, the next run collects it', async () => {
    let recovered = false;
    const { proxy } = await hosts((text, h) => `${h.url}/${recovered ? 'ok' : text}.wav?sig=abc`);
    const file = path.join(dir, 'page.yaml');
    await writeFile(file, speechManifest([{ id: 'intro', text: 'error-page' }, { id: 'outro', text: 'ok' }]));
    const outDir = path.join(dir, 'page.out');
    const input = { manifest: file, ledgerPath: path.join(dir, 'page.mediabatch.db'), outDir, baseUrl: proxy.url, token: TOKEN };
    const events = await runInProcess(input);
    const warnings = events.flatMap((e) => (e.kind === 'warning' ? [e.message] : []));
    expect(warnings.some((m) => m.startsWith('job "intro": paid result not collected (the result is not audio: its bytes are an HTML page, Content-Type text/html)'))).toBe(true);
    expect((await statusOf(`${outDir}.run.json`)).get('intro')).toMatchObject({
      state: 'submitted',
      collect_issue: 'not_collected',
      output: null,
      error: 'the result is not audio: its bytes are an HTML page, Content-Type text/html',
    });
    expect(tree(outDir)).toEqual(['outro.wav']);

    recovered = true;
    await runHere(input);
    expect((await statusOf(`${outDir}.run.json`)).get('intro')).toMatchObject({ state: 'done', output: path.join(outDir, 'intro.wav') });
    expect(tree(outDir)).toEqual(['intro.wav', 'outro.wav']);
    expect(sim.stats.accepted).toHaveLength(2);
  });

  it('--max-result-mb sets the limit: checked, named in the refusal, and raised on the next run', async () => {
    const { proxy } = await hosts((text, h) => `${h.url}/${text}.wav?sig=abc`);
    const file = path.join(dir, 'large.yaml');
    await writeFile(file, speechManifest([{ id: 'long-take', text: 'one-and-a-half-mb' }]));
    // The CLI's main in this process: the flag as typed, without a start-up for each run.
    const run = (mb: string) =>
      mainInProcess(['run', file, '--base-url', proxy.url, '--plan', 'unlimited', '--poll-ms', '50', '--max-result-mb', mb], { MEDIABATCH_TOKEN: TOKEN });

    const bad = await run('0');
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe('mediabatch: --max-result-mb: expected a whole number of megabytes from 1 to 10240, got "0"');

    const small = await run('1');
    expect(small.code, small.stderr).toBe(1);
    expect(small.stderr).toMatch(/larger than the limit of 1 MB \(more than \d+ bytes sent\); if that size is expected, run again with a higher --max-result-mb/);
    expect((await statusOf(path.join(dir, 'large.run.json'))).get('long-take')).toMatchObject({ state: 'submitted', collect_issue: 'not_collected' });

    // A limit of 2 MB (in this process: the flag's wiring is what the run above shows).
    const outDir = path.join(dir, 'large.out');
    const ledgerPath = path.join(dir, 'large.mediabatch.db');
    await runHere({ manifest: file, ledgerPath, outDir, baseUrl: proxy.url, token: TOKEN, options: { maxResultBytes: 2 * 1024 * 1024 } });
    expect((await statusOf(`${outDir}.run.json`)).get('long-take')).toMatchObject({ state: 'done', error: null });
    expect(sim.stats.accepted).toHaveLength(1);
  });
});
