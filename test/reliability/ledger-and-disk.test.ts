import { existsSync, mkdirSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/index.js';
import { hasStackTrace, runCli, tempDir } from '../helpers/cli.js';
import { deleteLedgerFiles } from '../helpers/ledger-files.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { byState, cliAgainst, collect, delay, FAST, ledgerRows, quickCheck, startAgainst, type StatusJson } from './helpers.js';
import { openSqliteLedger } from '../../src/store/index.js';

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

  it('a ledger deleted after a run, with its results still there, is refused instead of paying for every job again', async () => {
    sim = await startSimulator({ ...FAST });
    expect((await cliAgainst(sim, ['run', manifest])).code).toBe(0);
    deleteLedgerFiles(db);

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
    const fresh = await cliAgainst(sim, ['run', manifest]);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(sim.stats.accepted.length).toBe(24);
  });

  it('a ledger deleted after a --no-wait run, which leaves no results but its report: refused too', async () => {
    sim = await startSimulator({ ...FAST });
    expect((await cliAgainst(sim, ['run', manifest, '--no-wait'])).code).toBe(1);
    expect(existsSync(path.join(dir, 'batch.out'))).toBe(false);
    deleteLedgerFiles(db);

    const again = await cliAgainst(sim, ['run', manifest]);
    expectRefusal(again, 4, /no ledger with jobs at .*batch\.mediabatch\.db, but .*batch\.run\.json lists 12 requests already sent: .*move .*batch\.run\.json aside to start over/s);
    expect(sim.stats.accepted.length).toBe(12);
  });

  it('a new ledger made by estimate after the old one was deleted does not let a run pay again', async () => {
    sim = await startSimulator({ ...FAST });
    expect((await cliAgainst(sim, ['run', manifest])).code).toBe(0);
    deleteLedgerFiles(db);
    const estimate = await runCli(['estimate', manifest, '--base-url', sim.url, '--plan', 'unlimited'], { env: { MEDIABATCH_TOKEN: sim.token } });
    expect(estimate.code, estimate.stderr).toBe(0);
    expect(existsSync(db)).toBe(true);

    const again = await cliAgainst(sim, ['run', manifest]);
    expectRefusal(
      again,
      4,
      /no ledger with jobs at .*batch\.mediabatch\.db, but .*batch\.out holds results of an earlier run and .*batch\.run\.json lists 12 requests already sent: /s,
    );
    expect(sim.stats.accepted.length).toBe(12);
  });

  it('after run --no-wait, an estimate does not erase the trace: with the ledger deleted, the next run is refused', async () => {
    sim = await startSimulator({ ...FAST });
    expect((await cliAgainst(sim, ['run', manifest, '--no-wait'])).code).toBe(1);
    const estimate = await runCli(['estimate', manifest, '--base-url', sim.url, '--plan', 'unlimited'], { env: { MEDIABATCH_TOKEN: sim.token } });
    expect(estimate.code, estimate.stderr).toBe(0);
    // estimate writes files of its own and never the run's.
    expect(existsSync(path.join(dir, 'batch.estimate.json'))).toBe(true);
    expect(existsSync(path.join(dir, 'batch.estimate.csv'))).toBe(true);
    deleteLedgerFiles(db);

    const again = await cliAgainst(sim, ['run', manifest]);
    expectRefusal(again, 4, /no ledger with jobs at .*batch\.mediabatch\.db, but .*batch\.run\.json lists 12 requests already sent: /s);
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

    const again = await cliAgainst(sim, ['run', manifest]);
    expectRefusal(again, 4, /no ledger with jobs at .*batch\.mediabatch\.db, but .*batch\.run\.json says a run started sending requests: /s);
    expect(sim.stats.accepted.length).toBe(accepted);
  });

  it('a ledger deleted mid-run: the run stops at its next commit, writes the ledger back, and the next run resumes', async () => {
    sim = await startSimulator({ ...FAST, latencyMs: 30 });
    manifest = await writeTtsManifest(dir, { jobs: 60 });
    const run = startAgainst(sim, ['run', manifest, '--concurrency', '2']);
    const ended = collect(run);
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

    const again = await cliAgainst(sim, ['run', manifest, '--json']);
    expect(hasStackTrace(again.stderr), again.stderr).toBe(false);
    const summary = JSON.parse(again.stdout) as StatusJson;
    expect(sim.stats.duplicates()).toEqual([]);
    // A job whose request id only reached stderr is in doubt (never sent again); the rest are done.
    expect(summary.counts.in_doubt).toBe(printed.length);
    expect(summary.counts.done + summary.counts.in_doubt).toBe(60);
    expect(again.code).toBe(printed.length === 0 ? 0 : 1);
  });

  it('a truncated ledger: a clear message, exit 4, nothing sent; restored, the run resumes', async () => {
    sim = await startSimulator({ ...FAST });
    expect((await cliAgainst(sim, ['run', manifest, '--no-wait'])).code).toBe(1);
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

    const run = await cliAgainst(sim, ['run', manifest]);
    expectRefusal(run, 4, /ledger .*batch\.mediabatch\.db is not a usable SQLite database/);
    const status = await runCli(['status', manifest]);
    expectRefusal(status, 4, /ledger .*batch\.mediabatch\.db is not a usable SQLite database/);
    expect(sim.stats.calls.submit).toBe(12);

    rmSync(db);
    writeFileSync(db, '');
    const restored = new Database(backup, { readonly: true });
    await restored.backup(db);
    restored.close();
    const resumed = await cliAgainst(sim, ['run', manifest, '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect((JSON.parse(resumed.stdout) as StatusJson).counts.done).toBe(12);
    expect(sim.stats.calls.submit).toBe(12);
  });

  it('a ledger held in a write transaction by another process: a clear message, exit 4, nothing sent', async () => {
    sim = await startSimulator({ ...FAST });
    expect((await cliAgainst(sim, ['run', manifest, '--no-wait'])).code).toBe(1);
    // Raw SQLite on purpose: another program holding the file's write lock, not a ledger.
    const other = new Database(db);
    try {
      other.prepare('BEGIN IMMEDIATE').run();
      const blocked = await cliAgainst(sim, ['run', manifest]);
      expectRefusal(blocked, 4, /ledger .*batch\.mediabatch\.db .*locked by another process/);
      other.prepare('ROLLBACK').run();
    } finally {
      other.close();
    }
    expect(sim.stats.calls.submit).toBe(12);
    const resumed = await cliAgainst(sim, ['run', manifest]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(byState(await ledgerRows(db))).toEqual({ done: 12 });
  });

  it('a results folder that cannot be created: a clear message, exit 4, nothing paid for; fixed, the run completes', async () => {
    sim = await startSimulator({ ...FAST });
    // chmod does not stop root, which CI may be; a path under a regular file fails for everyone (ENOTDIR).
    const blocker = path.join(dir, 'not-a-folder');
    writeFileSync(blocker, 'a file');
    const out = path.join(blocker, 'out');

    const result = await cliAgainst(sim, ['run', manifest, '--out', out]);
    expectRefusal(result, 4, /cannot write results to .*not-a-folder\/out/);
    expect(sim.stats.calls.submit).toBe(0);
    expect(quickCheck(db)).toBe('ok');

    rmSync(blocker);
    mkdirSync(blocker);
    const fixed = await cliAgainst(sim, ['run', manifest, '--out', out, '--json']);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect((JSON.parse(fixed.stdout) as StatusJson).counts.done).toBe(12);
    expect(readdirSync(out)).toHaveLength(12);
    expect(sim.stats.duplicates()).toEqual([]);
  });

  it('a regular file where the results folder goes: says it is a file, exit 4, nothing sent', async () => {
    sim = await startSimulator({ ...FAST });
    const out = path.join(dir, 'batch.out');
    writeFileSync(out, 'a file');

    const result = await cliAgainst(sim, ['run', manifest]);
    expectRefusal(result, 4, /cannot write results to .*batch\.out: .*batch\.out is a file, not a folder; move it away or pass --out DIR\. Nothing was sent\./);
    expect(sim.stats.calls.submit).toBe(0);
    const below = await cliAgainst(sim, ['run', manifest, '--out', path.join(out, 'inner')]);
    expectRefusal(below, 4, /cannot write results to .*batch\.out\/inner: .*batch\.out is a file, not a folder/);
    expect(sim.stats.calls.submit).toBe(0);
  });

  it('two runs of one manifest at once: the second refuses, naming the first one’s pid, and sends nothing', async () => {
    sim = await startSimulator({ ...FAST, latencyMs: 150 });
    // 40 submits two at a time at 150 ms each: the first run is busy for 3 s.
    manifest = await writeTtsManifest(dir, { jobs: 40 });
    const first = startAgainst(sim, ['run', manifest, '--concurrency', '2']);
    const firstEnded = collect(first);
    // Wait until the first run is submitting: it holds the lock by then.
    const until = Date.now() + 10_000;
    while (sim.stats.calls.submit === 0 && Date.now() < until) await delay(10);
    expect(sim.stats.calls.submit).toBeGreaterThan(0);

    const second = await cliAgainst(sim, ['run', manifest]);
    expectRefusal(second, 4, new RegExp(`in use by mediabatch pid ${first.pid as number}\\b`));
    const done = await firstEnded;
    expect(done.code, done.stderr).toBe(0);
    expect(sim.stats.accepted.length).toBe(40);
    expect(sim.stats.duplicates()).toEqual([]);
  });

  it('an estimate of an edited manifest while a run sends: figures from a copy, the run’s jobs and prices untouched', async () => {
    sim = await startSimulator({ ...FAST, latencyMs: 150 });
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
    const run = startAgainst(sim, ['run', manifest, '--concurrency', '1']);
    const runEnded = collect(run);
    const until = Date.now() + 10_000;
    while (sim.stats.calls.submit === 0 && Date.now() < until) await delay(10);
    expect(sim.stats.calls.submit).toBeGreaterThan(0);
    const before = await jobContents(db);

    // Texts 40 times longer, one row gone: what the run sends must not change with them.
    writeRows(all.filter((i) => i !== 26), 40);
    const estimate = await runCli(['estimate', manifest, '--json', '--base-url', sim.url, '--plan', 'unlimited'], { env: { MEDIABATCH_TOKEN: sim.token } });
    expect(estimate.code, estimate.stderr).toBe(0);
    expect(await jobContents(db)).toEqual(before);
    expect(estimate.stderr).toContain(
      `the ledger ${db} is in use by mediabatch pid ${run.pid as number} on ${os.hostname()} (run): this estimate works on a copy of it taken now and leaves the ledger itself untouched`,
    );
    // The estimate priced the edited manifest: 39 jobs.
    expect((JSON.parse(estimate.stdout) as { jobs: unknown[] }).jobs).toHaveLength(39);

    const done = await runEnded;
    expect(done.code, done.stderr).toBe(0);
    expect(sim.stats.accepted.length).toBe(40);
    expect(await jobContents(db)).toEqual(before);
  });
});

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
