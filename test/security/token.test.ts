import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/index.js';
import { collect, hasStackTrace, startCli, tempDir, type CliResult } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { speechManifest, startProxy, startScripted, type Received, type Scripted } from './servers.js';

/** Distinctive enough that finding it anywhere can only mean it leaked. */
const TOKEN = 'mbtok-LEAKCHECK-7d41f9a2c6e84b0f3a55';

/** Every file the run left in `dir` (ledger, -wal, reports, CSV, results), except the token file. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) out.push(...filesUnder(file));
    else if (name !== 'token.txt') out.push(file);
  }
  return out;
}

interface Observed extends Pick<CliResult, 'code' | 'stdout' | 'stderr'> {
  /** /proc/<pid>/cmdline read while the CLI was running. */
  cmdlines: string[];
  /** What names the program in those: the built CLI's file, or this process's own. */
  program: string;
}

/** /proc/<pid>/cmdline, read now and every 50 ms until `done` settles. */
async function watchCmdline<T>(pid: number, done: Promise<T>): Promise<{ result: T; cmdlines: string[] }> {
  const cmdlines: string[] = [];
  const read = (): void => {
    try {
      cmdlines.push(readFileSync(`/proc/${pid}/cmdline`).toString('utf8').replaceAll('\0', ' '));
    } catch {
      // Exited already.
    }
  };
  read();
  const timer = setInterval(read, 50);
  try {
    return { result: await done, cmdlines };
  } finally {
    clearInterval(timer);
  }
}

/** Runs the built CLI, reading its process arguments from /proc while it runs. */
async function observe(args: string[], env: Record<string, string | undefined>): Promise<Observed> {
  const child = startCli(args, { env });
  const { result, cmdlines } = await watchCmdline(child.pid ?? -1, collect(child, 60_000));
  return { ...result, cmdlines, program: 'main.js' };
}

/**
 * The CLI's main in this process, reading this process's arguments while it runs (a title the
 * program gave itself shows there). For the answers the service sends back: the spawns show the
 * arguments a CLI is started with.
 */
async function observeInProcess(args: string[], env: Record<string, string | undefined>): Promise<Observed> {
  const { result, cmdlines } = await watchCmdline(process.pid, mainInProcess(args, env));
  return { ...result, cmdlines, program: path.basename(process.argv[1] ?? process.execPath) };
}

/** The token in none of: stdout, stderr, process arguments, any file the run wrote (raw bytes). */
function expectNoToken(dir: string, result: Observed): void {
  expect(result.cmdlines.length).toBeGreaterThan(0);
  expect(result.cmdlines.some((line) => line.includes(result.program))).toBe(true);
  for (const line of result.cmdlines) expect(line).not.toContain(TOKEN);
  expect(result.stdout).not.toContain(TOKEN);
  expect(result.stderr).not.toContain(TOKEN);
  const files = filesUnder(dir);
  for (const file of files) {
    const bytes = readFileSync(file);
    expect(bytes.includes(TOKEN), `token found in ${file}`).toBe(false);
    // SQLite may hold text as UTF-16 too.
    expect(bytes.includes(Buffer.from(TOKEN, 'utf16le')), `token (UTF-16) found in ${file}`).toBe(false);
  }
}

function expectNoAuthorization(server: Scripted): void {
  expect(server.received.length).toBeGreaterThan(0);
  for (const req of server.received) expect(req.headers.authorization).toBeUndefined();
}

/** A hostile answer: the request's own Authorization header put into the error text. */
function echo(req: Received): string {
  return `bad request; you sent Authorization: ${req.headers.authorization ?? ''} (token ${(req.headers.authorization ?? '').slice(7)})`;
}

describe('the token never leaks', () => {
  let sim: Simulator | undefined;
  let servers: Scripted[] = [];
  let dir: string;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir('mediabatch-token-'));
    servers = [];
  });
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await sim?.close();
    sim = undefined;
    await cleanup();
  });

  async function manifest(jobs: { id: string; text: string }[]): Promise<string> {
    const file = path.join(dir, 'batch.yaml');
    await writeFile(file, speechManifest(jobs));
    return file;
  }

  it('a successful run, its status, and the result host (which gets no Authorization)', async () => {
    sim = await startSimulator({ token: TOKEN, pendingMs: { txt2audio: 10, img2video: 10 }, processingMs: { txt2audio: 20, img2video: 20 } });
    const results = await startScripted(() => ({ status: 200, headers: { 'content-type': 'audio/wav' }, body: Buffer.from('RIFF....WAVEfmt ') }));
    const proxy = await startProxy(sim.url, { resultUrl: () => `${results.url}/r/ok.wav?sig=abc` });
    servers.push(results, proxy);
    const file = await manifest([
      { id: 'one', text: 'First line.' },
      { id: 'two', text: 'Second line.' },
    ]);
    const run = await observe(['run', file, '--json', '--base-url', proxy.url, '--plan', 'unlimited', '--poll-ms', '50'], { MEDIABATCH_TOKEN: TOKEN });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(path.join(dir, 'batch.run.json'))).toBe(true);
    expect(existsSync(path.join(dir, 'batch.run.csv'))).toBe(true);
    const status = await observeInProcess(['status', file, '--json'], { MEDIABATCH_TOKEN: TOKEN });
    expect(status.code).toBe(0);
    // Every API call carried the token; no result download did.
    expect(proxy.received.every((req) => req.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expectNoAuthorization(results);
    expectNoToken(dir, run);
    expectNoToken(dir, status);
  });

  it('a wrong token, from the simulator and from a server that echoes it in its 401', async () => {
    sim = await startSimulator({ token: 'the-right-one' });
    const file = await manifest([{ id: 'one', text: 'First line.' }]);
    const hostile = await startScripted((req) => ({ status: 401, body: JSON.stringify({ message: `Unauthenticated. ${echo(req)}` }) }));
    servers.push(hostile);
    const runAgainst = (url: string): Promise<Observed> => {
      const args = ['run', file, '--base-url', url, '--plan', 'unlimited', '--poll-ms', '50'];
      return observeInProcess(args, { MEDIABATCH_TOKEN: TOKEN });
    };
    const plain = await runAgainst(sim.url);
    const echoed = await runAgainst(hostile.url);
    const models = await observeInProcess(['models', '--base-url', hostile.url, '--json'], { MEDIABATCH_TOKEN: TOKEN });
    expect(plain.code).toBe(4);
    expect(hasStackTrace(plain.stderr)).toBe(false);
    expectNoToken(dir, plain);

    expect(echoed.code).toBe(4);
    expect(echoed.stderr).toMatch(/HTTP 401 not authenticated/);
    expect(echoed.stderr).toContain('[redacted]');
    expect(hasStackTrace(echoed.stderr)).toBe(false);
    expectNoToken(dir, echoed);
    expect(models.code).toBe(4);
    expectNoToken(dir, models);
  });

  it('a service whose 500 (JSON and HTML) and 422 answers echo the request headers', async () => {
    sim = await startSimulator({ token: TOKEN, pendingMs: { txt2audio: 10, img2video: 10 }, processingMs: { txt2audio: 20, img2video: 20 } });
    const proxy = await startProxy(sim.url, {
      submit: (text, req) => {
        if (text.includes('json-500')) return { status: 500, body: JSON.stringify({ message: `Server Error: ${echo(req)}` }) };
        if (text.includes('html-500')) {
          return { status: 500, headers: { 'content-type': 'text/html' }, body: `<html><body><h1>500</h1><pre>${echo(req)}</pre></body></html>` };
        }
        if (text.includes('field-422')) {
          return {
            status: 422,
            body: JSON.stringify({ message: `The text is invalid. ${echo(req)}`, errors: { text: [echo(req)], [TOKEN]: ['header name echo'] } }),
          };
        }
        if (text.includes('escaped-422')) {
          // The token hidden behind JSON escapes in the raw body: only the parsed text shows it.
          const escaped = JSON.stringify({ message: `Invalid. ${echo(req)}` }).replace(/-/g, '\\u002d');
          return { status: 422, body: escaped };
        }
        return undefined;
      },
    });
    servers.push(proxy);
    const file = await manifest([
      { id: 'ok', text: 'A normal line.' },
      { id: 'j500', text: 'json-500 please' },
      { id: 'h500', text: 'html-500 please' },
      { id: 'f422', text: 'field-422 please' },
      { id: 'e422', text: 'escaped-422 please' },
    ]);
    const runArgs = ['run', file, '--json', '--base-url', proxy.url, '--plan', 'unlimited', '--poll-ms', '50'];
    const run = await observeInProcess(runArgs, { MEDIABATCH_TOKEN: TOKEN });
    expect(run.code, run.stderr).toBe(1);
    expect(hasStackTrace(run.stderr)).toBe(false);
    const summary = JSON.parse(run.stdout) as { jobs: { id: string; state: string; error: string | null }[] };
    const byId = new Map(summary.jobs.map((job) => [job.id, job]));
    expect(byId.get('ok')?.state).toBe('done');
    expect(byId.get('j500')?.state).toBe('in_doubt');
    expect(byId.get('h500')?.state).toBe('in_doubt');
    expect(byId.get('f422')?.state).toBe('failed');
    expect(byId.get('e422')?.state).toBe('failed');
    // The reasons are still there to read, with the token blanked out.
    for (const id of ['j500', 'h500', 'f422', 'e422']) expect(byId.get(id)?.error ?? '').toContain('[redacted]');
    const status = await observeInProcess(['status', file], { MEDIABATCH_TOKEN: TOKEN });
    expectNoToken(dir, run);
    expectNoToken(dir, status);
  });

  it('--token-file: the token is read from the file and shows nowhere else', async () => {
    sim = await startSimulator({ token: TOKEN, pendingMs: { txt2audio: 10, img2video: 10 }, processingMs: { txt2audio: 20, img2video: 20 } });
    const tokenFile = path.join(dir, 'token.txt');
    await writeFile(tokenFile, `${TOKEN}\n`);
    const file = await manifest([{ id: 'one', text: 'First line.' }]);
    // A wrong token from a file (its own, so both commands run at once): refused, and not printed either.
    await mkdir(path.join(dir, 'wrong'));
    const wrongFile = path.join(dir, 'wrong', 'token.txt');
    await writeFile(wrongFile, `${TOKEN}-wrong\n`);
    const [run, wrong] = await Promise.all([
      observe(['run', file, '--token-file', tokenFile, '--base-url', sim.url, '--plan', 'unlimited', '--poll-ms', '50'], {}),
      observe(['models', '--token-file', wrongFile, '--base-url', sim.url], {}),
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.cmdlines.some((line) => line.includes('--token-file'))).toBe(true);
    expectNoToken(dir, run);

    expect(wrong.code).toBe(4);
    expectNoToken(dir, wrong);
  });
});
