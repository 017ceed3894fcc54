import { existsSync, mkdirSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/index.js';
import { hasStackTrace, runCli, tempDir } from '../helpers/cli.js';
import { deleteLedgerFiles } from '../helpers/ledger-files.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { byState, cliAgainst, collect, delay, FAST, ledgerRows, mainAgainst, quickCheck, startAgainst } from './helpers.js';
import { openSqliteLedger } from '../../src/store/index.js';
import type { RunResult } from '../../src/runner/index.js';
import type { Clock } from '../../src/clock.js';
import { estimateInProcess, runInProcessResult, type InProcessRun } from '../helpers/in-process.js';

/** What goes wrong around the run rather than in it: the ledger file, the results folder, a second run. */
describe('the ledger and the results folder under trouble', () => {
  let sim: Simulator;
  let dir: string;
  let db: string;
  let manifest: string;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    db = path.join(dir, 'batch.mediabatch.db');
    manifest = await writeTtsManifest(dir, { jobs: 12 });
  });
  afterEach(async () => {
    await sim?.close();
    await cleanup();
  });

  /** One clear line from mediabatch, no stack, the given exit code, nothing more submitted. */
  function expectRefusal(result: { code: number | null; stderr: string }, code: number, pattern: RegExp): void {
    expect(hasStackTrace(result.stderr), result.stderr).toBe(false);
    expect(result.stderr).toMatch(pattern);
    expect(result.code, result.stderr).toBe(code);
  }

  /** A run of `manifest` in this process (its files where the CLI puts them): what the runner decides, without a CLI start-up. */
  async function runHere(more: Partial<InProcessRun> = {}): Promise<RunResult> {
    const at = (name: string) => path.join(dir, `batch.${name}`);
    const files = { db, out: at('out'), runJson: at('run.json'), runCsv: at('run.csv'), legacyReport: at('report.json') };
    const { result } = await runInProcessResult({ manifest, ledgerPath: db, outDir: files.out, files, baseUrl: sim.url, token: sim.token, ...more });
    return result;
  }

  /** The runner refuses a lost ledger (the CLI turns it into exit 4, as the first test shows) and sends nothing. */
  async function expectLostLedger(pattern: RegExp): Promise<void> {
    const submits = sim.stats.calls.submit;
    await expect(runHere()).rejects.toThrow(expect.objectContaining({ code: 'E_LEDGER_MISSING', message: expect.stringMatching(pattern) }));
    expect(sim.stats.calls.submit).toBe(submits);
  }

  it('a ledger deleted after a run, with its results still there, is refused instead of paying for every job again', async () => {
    sim = await startSimulator({ ...FAST });
    await runHere();
    deleteLedgerFiles(db);

    // The spawn shows the exit code and the wording; the refusal itself is the runner's (below, in-process).
    const again = await cliAgainst(sim, ['run', manifest]);
    expectRefusal(
      again,
      4,
      /no ledger with jobs at .*batch\.mediabatch\.db, but .*batch\.out holds results of an earlier run and .*batch\.run\.json lists 12 requests already sent: .*move .*batch\.out and .*batch\.run\.json aside to start over/s,
    );
    expect(sim.stats.accepted.length).toBe(12);
    expect(sim.stats.duplicates()).toEqual([]);

    // Moving the results and the report aside is the way to start over on purpose.
    rmSync(path.join(dir, 'batch.out'), { recursive: true });
    rmSync(path.join(dir, 'batch.run.json'));
    expect((await runHere()).summary.counts.done).toBe(12);
    expect(sim.stats.accepted.length).toBe(24);
  });

  it('a ledger deleted after a --no-wait run, which leaves no results but its report: refused too', async () => {
    sim = await startSimulator({ ...FAST });
    expect((await runHere({ noWait: true })).summary.counts.submitted).toBe(12);
    expect(existsSync(path.join(dir, 'batch.out'))).toBe(false);
    deleteLedgerFiles(db);

    await expectLostLedger(/no ledger with jobs at .*batch\.mediabatch\.db, but .*batch\.run\.json lists 12 requests already sent: .*move .*batch\.run\.json aside to start over/s);
    expect(sim.stats.accepted.length).toBe(12);
  });

  it('a new ledger made by estimate after the old one was deleted does not let a run pay again', async () => {
    sim = await startSimulator({ ...FAST });
    await runHere();
    deleteLedgerFiles(db);
    await estimateInProcess({ manifest, ledgerPath: db, baseUrl: sim.url, token: sim.token });
    expect(existsSync(db)).toBe(true);

    await expectLostLedger(/no ledger with jobs at .*batch\.mediabatch\.db, but .*batch\.out holds results of an earlier run and .*batch\.run\.json lists 12 requests already sent: /s);
    expect(sim.stats.accepted.length).toBe(12);
  });

  it('after run --no-wait, an estimate does not erase the trace: with the ledger deleted, the next run is refused', async () => {
    sim = await startSimulator({ ...FAST });
    await runHere({ noWait: true });
    // The CLI's estimate: the files it writes beside the manifest are its own, never the run's.
    const estimate = await mainInProcess(['estimate', manifest, '--base-url', sim.url, '--plan', 'unlimited'], { MEDIABATCH_TOKEN: sim.token });
    expect(estimate.code, estimate.stderr).toBe(0);
    expect(existsSync(path.join(dir, 'batch.estimate.json'))).toBe(true);
    expect(existsSync(path.join(dir, 'batch.estimate.csv'))).toBe(true);
    deleteLedgerFiles(db);

    await expectLostLedger(/no ledger with jobs at .*batch\.mediabatch\.db, but .*batch\.run\.json lists 12 requests already sent: /s);
    expect(sim.stats.accepted.length).toBe(12);
  });

  it('the trace is written before the first submit: killed mid-run, ledger deleted, the next run is refused', async () => {
    sim = await startSimulator({ ...FAST, latencyMs: 40 });
    manifest = await writeTtsManifest(dir, { jobs: 40 });
    const run = startAgainst(sim, ['run', manifest, '--concurrency', '2']);
    const ended = collect(run);
    const until = Date.now() + 10_000;
    while (sim.stats.accepted.length < 3 && Date.now() < until) await delay(5);
    run.kill('SIGKILL');
    await ended;
    expect(sim.stats.accepted.length).toBeGreaterThan(0);
    deleteLedgerFiles(db);
    const accepted = sim.stats.accepted.length;

    await expectLostLedger(/no ledger with jobs at .*batch\.mediabatch\.db, but .*batch\.run\.json says a run started sending requests: /s);
    expect(sim.stats.accepted.length).toBe(accepted);
  });

  it('a ledger deleted mid-run: the run stops at its next commit, writes the ledger back, and the next run resumes', async () => {
    sim = await startSimulator({ ...FAST, latencyMs: 30 });
    manifest = await writeTtsManifest(dir, { jobs: 60 });
    // The CLI's main in this process: the file goes from under the run, not the run's process.
    const ended = mainAgainst(sim, ['run', manifest, '--concurrency', '2']);
    const until = Date.now() + 10_000;
    while (sim.stats.accepted.length < 10 && Date.now() < until) await delay(5);
    deleteLedgerFiles(db);
    const acceptedAtDeletion = sim.stats.accepted.length;

    const stopped = await ended;
    expectRefusal(stopped, 4, /ledger .*batch\.mediabatch\.db was deleted while this run was writing to it: nothing more is sent\. Everything it had recorded was written back/);
    // Only the submits already on their way when the file went can have been taken after it.
    expect(sim.stats.accepted.length).toBeLessThanOrEqual(acceptedAtDeletion + 2);
    expect(quickCheck(db)).toBe('ok');
    const rescued = await ledgerRows(db);
    expect(rescued).toHaveLength(60);
    // Every request the service took is in the rescued ledger or was printed to keep.
    const known = new Set(rescued.map((row) => row.request_id));
    const printed = [...stopped.stderr.matchAll(/accepted as request (\S+), but the ledger could not record it/g)].map((m) => m[1]);
    for (const { requestId } of sim.stats.accepted) expect(known.has(requestId) || printed.includes(requestId), requestId).toBe(true);

    // The next run's decisions are the runner's: in-process.
    const { summary } = await runHere();
    expect(sim.stats.duplicates()).toEqual([]);
    // A job whose request id only reached stderr is in doubt (never sent again); the rest are done.
    expect(summary.counts.in_doubt).toBe(printed.length);
    expect(summary.counts.done + summary.counts.in_doubt).toBe(60);
    // That jobs in doubt make the CLI exit 1 is faults.test.ts's spawn test.
  });

  it('a truncated ledger: a clear message, exit 4, nothing sent; restored, the run resumes', async () => {
    sim = await startSimulator({ ...FAST });
    await runHere({ noWait: true });
    expect(existsSync(`${db}-wal`)).toBe(false);
    const size = statSync(db).size;
    const backup = `${db}.bak`;
    writeFileSync(backup, '');
    // Keep a copy to restore, then cut the file in the middle of a page. Raw SQLite on purpose:
    // a file-level backup and a broken file are below anything the ledger interface offers.
    const original = new Database(db, { readonly: true });
    await original.backup(backup);
    original.close();
    truncateSync(db, Math.floor(size / 2) + 100);

    const run = await mainAgainst(sim, ['run', manifest]);
    expectRefusal(run, 4, /ledger .*batch\.mediabatch\.db is not a usable SQLite database/);
    // status opens the ledger read-only: that open refuses it too (the same error, so the same exit 4).
    await expect(openSqliteLedger(db, { mode: 'read-only' })).rejects.toThrow(/ledger .*batch\.mediabatch\.db is not a usable SQLite database/);
    expect(sim.stats.calls.submit).toBe(12);

    rmSync(db);
    writeFileSync(db, '');
    const restored = new Database(backup, { readonly: true });
    await restored.backup(db);
    restored.close();
    expect((await runHere()).summary.counts.done).toBe(12);
    expect(sim.stats.calls.submit).toBe(12);
  });

  it('a ledger held in a write transaction by another process: a clear message, exit 4, nothing sent', async () => {
    sim = await startSimulator({ ...FAST });
    await runHere({ noWait: true });
    // Raw SQLite on purpose: another program holding the file's write lock, not a ledger.
    const other = new Database(db);
    try {
      other.prepare('BEGIN IMMEDIATE').run();
      // The CLI's main in this process: the first test's spawn shows a ledger refusal's exit 4 through a process.
      const blocked = await mainAgainst(sim, ['run', manifest]);
      expectRefusal(blocked, 4, /ledger .*batch\.mediabatch\.db .*locked by another process/);
      other.prepare('ROLLBACK').run();
    } finally {
      other.close();
    }
    expect(sim.stats.calls.submit).toBe(12);
    await runHere();
    expect(byState(await ledgerRows(db))).toEqual({ done: 12 });
  });

  it('a results folder that cannot be created: a clear message, exit 4, nothing paid for; fixed, the run completes', async () => {
    sim = await startSimulator({ ...FAST });
    // chmod does not stop root, which CI may be; a path under a regular file fails for everyone (ENOTDIR).
    const blocker = path.join(dir, 'not-a-folder');
    writeFileSync(blocker, 'a file');
    const out = path.join(blocker, 'out');

    const result = await mainAgainst(sim, ['run', manifest, '--out', out]);
    expectRefusal(result, 4, /cannot write results to .*not-a-folder\/out/);
    expect(sim.stats.calls.submit).toBe(0);
    expect(quickCheck(db)).toBe('ok');

    rmSync(blocker);
    mkdirSync(blocker);
    expect((await runHere({ outDir: out, files: undefined })).summary.counts.done).toBe(12);
    expect(readdirSync(out)).toHaveLength(12);
    expect(sim.stats.duplicates()).toEqual([]);
  });

  it('a regular file where the results folder goes: says it is a file, exit 4, nothing sent', async () => {
    sim = await startSimulator({ ...FAST });
    const out = path.join(dir, 'batch.out');
    writeFileSync(out, 'a file');

    const result = await mainAgainst(sim, ['run', manifest]);
    expectRefusal(result, 4, /cannot write results to .*batch\.out: .*batch\.out is a file, not a folder; move it away or pass --out DIR\. Nothing was sent\./);
    expect(sim.stats.calls.submit).toBe(0);
    await expect(runHere({ outDir: path.join(out, 'inner'), files: undefined })).rejects.toThrow(
      expect.objectContaining({ code: 'E_OUTPUT', message: expect.stringMatching(/cannot write results to .*batch\.out\/inner: .*batch\.out is a file, not a folder/) }),
    );
    expect(sim.stats.calls.submit).toBe(0);
  });

  it('two runs of one manifest at once: the second refuses, naming the first one’s pid, and sends nothing', async () => {
    const held = await holdingSimulator();
    sim = held.sim;
    const first = await runHolding();
    await until(() => sim.stats.accepted.length === 12);

    const second = await cliAgainst(sim, ['run', manifest]);
    expectRefusal(second, 4, new RegExp(`in use by mediabatch pid ${process.pid}\\b`));
    expect(sim.stats.calls.submit).toBe(12);
    held.release();
    expect((await first.ended).summary.counts.done).toBe(12);
    expect(sim.stats.accepted.length).toBe(12);
    expect(sim.stats.duplicates()).toEqual([]);
  });

  it('an estimate of an edited manifest while a run sends: figures from a copy, the run’s jobs and prices untouched', async () => {
    const held = await holdingSimulator();
    sim = held.sim;
    const csv = path.join(dir, 'chapters.csv');
    const writeRows = (ids: number[], repeat: number) =>
      writeFileSync(csv, `id,text\n${ids.map((i) => `c${i},${`Chapter ${i} opens. `.repeat(repeat)}`).join('\n')}\n`);
    const all = Array.from({ length: 40 }, (_, i) => i);
    writeRows(all, 1);
    manifest = path.join(dir, 'chapters.yaml');
    writeFileSync(
      manifest,
      'version: 1\ndefaults:\n  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }\nsources:\n  - csv: chapters.csv\n    type: txt2audio\n',
    );
    db = path.join(dir, 'chapters.mediabatch.db');
    const run = await runHolding();
    await until(() => sim.stats.calls.submit > 0);
    const before = await jobContents(db);

    // Texts 40 times longer, one row gone: what the run sends must not change with them.
    writeRows(all.filter((i) => i !== 26), 40);
    const estimate = await runCli(['estimate', manifest, '--json', '--base-url', sim.url, '--plan', 'unlimited'], { env: { MEDIABATCH_TOKEN: sim.token } });
    expect(estimate.code, estimate.stderr).toBe(0);
    expect(await jobContents(db)).toEqual(before);
    expect(estimate.stderr).toContain(
      `the ledger ${db} is in use by mediabatch pid ${process.pid} on ${os.hostname()} (run): this estimate works on a copy of it taken now and leaves the ledger itself untouched`,
    );
    // The estimate priced the edited manifest: 39 jobs.
    expect((JSON.parse(estimate.stdout) as { jobs: unknown[] }).jobs).toHaveLength(39);

    held.release();
    expect((await run.ended).summary.counts.done).toBe(40);
    expect(sim.stats.accepted.length).toBe(40);
    expect(await jobContents(db)).toEqual(before);
  });

  /**
   * A run in this process that holds the run lock as the CLI's run takes it, against a holding
   * simulator: it is still running, for sure, while a spawned CLI meets it, however slow that
   * start is (a run of a few jobs at real speed could end first).
   */
  async function runHolding(): Promise<{ ended: Promise<RunResult> }> {
    const ledger = await openSqliteLedger(db, { mode: 'read-write' });
    await ledger.acquireRunLock({ pid: process.pid, host: os.hostname(), command: 'run' });
    const ended = runInProcessResult({ manifest, ledgerPath: db, ledger, outDir: db.replace(/\.mediabatch\.db$/, '.out'), baseUrl: sim.url, token: sim.token })
      .then(({ result }) => result)
      .finally(() => ledger.close());
    return { ended };
  }
});

const HOLD_MS = 3_600_000;

/** A simulator whose speech jobs stay processing until `release` moves its clock past their end. */
async function holdingSimulator(): Promise<{ sim: Simulator; release: () => void }> {
  let offsetMs = 0;
  const clock: Clock = { nowMs: () => Date.now() + offsetMs };
  const sim = await startSimulator({ ...FAST, processingMs: { ...FAST.processingMs, txt2audio: HOLD_MS }, clock });
  return { sim, release: () => (offsetMs = HOLD_MS) };
}

async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done() && Date.now() < deadline) await delay(5);
  expect(done()).toBe(true);
}

/** What each job sends and what it costs, as the ledger records them. */
async function jobContents(file: string): Promise<{ id: string; hash: string; text: string | null; priceMicro: number | null; listed: boolean }[]> {
  const ledger = await openSqliteLedger(file, { mode: 'read-only' });
  try {
    const rows = await ledger.readJobs({ scope: 'all', limit: 1000 });
    return rows.map((row) => ({ id: row.id, hash: row.contentHash, text: row.text, priceMicro: row.priceMicro, listed: row.inManifest }));
  } finally {
    await ledger.close();
  }
}
