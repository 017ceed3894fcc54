import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/index.js';
import { hasStackTrace, tempDir } from '../helpers/cli.js';
import { runInProcessResult, type InProcessRun } from '../helpers/in-process.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import type { RunResult } from '../../src/runner/index.js';
import { byState, cliAgainst, FAST, ledgerRows, mainAgainst, quickCheck } from './helpers.js';

/**
 * A results folder that fills up mid-run. Where this machine lets us mount a tmpfs (CI runs as
 * root), the folder is a 64 KB one: a few WAV results fit, the next write meets ENOSPC. Where
 * it does not, the folder is a path below a regular file (ENOTDIR), which fails at the first
 * write instead; the product's answer must be the same clear stop either way.
 */
function mountSmallTmpfs(target: string, size = '64k'): boolean {
  mkdirSync(target, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', target], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function canMountTmpfs(): boolean {
  const probe = mkdtempSync(path.join(tmpdir(), 'mediabatch-mount-'));
  const ok = mountSmallTmpfs(probe);
  if (ok) execFileSync('umount', [probe], { stdio: 'ignore' });
  rmSync(probe, { recursive: true, force: true });
  return ok;
}

describe('the results folder runs out of space mid-run', () => {
  let sim: Simulator;
  let dir: string;
  let out: string;
  let mounted = false;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    out = path.join(dir, 'small');
    mounted = mountSmallTmpfs(out);
    if (!mounted) {
      writeFileSync(path.join(dir, 'plain-file'), 'not a folder');
      out = path.join(dir, 'plain-file', 'out');
    }
  });
  afterEach(async () => {
    await sim?.close();
    if (mounted) execFileSync('umount', [path.join(dir, 'small')], { stdio: 'ignore' });
    await cleanup();
  });

  /** A run in this process with room on its disks: what the runner does next, without a CLI start-up. */
  async function runHere(manifest: string, ledgerPath: string, outDir: string, more: Partial<InProcessRun> = {}): Promise<RunResult> {
    return (await runInProcessResult({ manifest, ledgerPath, outDir, baseUrl: sim.url, token: sim.token, ...more })).result;
  }

  it('stops with a clear message and exit 4, loses no request id, and finishes once there is room', async () => {
    sim = await startSimulator({ ...FAST });
    const manifest = await writeTtsManifest(dir, { jobs: 24 });
    const db = path.join(dir, 'batch.mediabatch.db');

    const full = await cliAgainst(sim, ['run', manifest, '--out', out]);
    expect(hasStackTrace(full.stderr), full.stderr).toBe(false);
    expect(full.code, full.stderr).toBe(4);
    expect(full.stderr).toMatch(mounted ? /ENOSPC|no space/i : /results|folder|ENOTDIR/i);
    expect(quickCheck(db)).toBe('ok');
    const rows = await ledgerRows(db);
    // Every job the service took is recorded with its request id; none is lost or in doubt.
    expect(rows.filter((r) => r.state === 'in_doubt')).toEqual([]);
    for (const row of rows.filter((r) => r.state === 'submitted' || r.state === 'done')) expect(row.request_id).not.toBeNull();
    expect(sim.stats.accepted.length).toBe(rows.filter((r) => r.request_id !== null).length);
    if (mounted) {
      // Some results fitted and are complete; no half-written `.part` is left behind.
      expect(readdirSync(out).filter((f) => f.endsWith('.part'))).toEqual([]);
      expect(byState(rows).done ?? 0).toBeGreaterThan(0);
    }

    // With room, the next run (its decisions, in-process) collects every job.
    await runHere(manifest, db, path.join(dir, 'roomy'));
    expect(byState(await ledgerRows(db))).toEqual({ done: 24 });
    expect(sim.stats.duplicates()).toEqual([]);
    expect(sim.stats.accepted).toHaveLength(24);
  });

  // Only where a tmpfs can be mounted (CI runs as root): the ledger itself cannot be made to
  // fill up any other way from outside the process.
  it.runIf(canMountTmpfs())('a ledger whose disk fills mid-run: exit 4, and every accepted but unrecorded request id is printed', async () => {
    sim = await startSimulator({ ...FAST });
    const manifest = await writeTtsManifest(dir, { jobs: 200 });
    const ledgerDir = path.join(dir, 'ledger');
    // Room for the ledger and the ingest's WAL (about 260 KB each for 200 jobs), not for their submits.
    expect(mountSmallTmpfs(ledgerDir, '800k')).toBe(true);
    const saved = path.join(dir, 'saved');
    try {
      const full = await cliAgainst(sim, ['run', manifest, '--db', path.join(ledgerDir, 'batch.db'), '--out', path.join(dir, 'out')]);
      expect(hasStackTrace(full.stderr), full.stderr).toBe(false);
      expect(full.code, full.stderr).toBe(4);
      expect(full.stderr).toMatch(/cannot write the ledger .*(disk is full|SQLITE_FULL)/);
      // The disk filled during the submits, not before them.
      expect(sim.stats.accepted.length).toBeGreaterThan(0);
      expect(sim.stats.accepted.length).toBeLessThan(200);
      const printed = [...full.stderr.matchAll(/was accepted as request (\S+), but the ledger could not record it/g)].map((m) => m[1]);
      mkdirSync(saved);
      for (const file of readdirSync(ledgerDir)) writeFileSync(path.join(saved, file), readFileSync(path.join(ledgerDir, file)));
      // With room again the run goes on (in-process): the unrecorded ones are in doubt, never sent
      // twice. That jobs in doubt make the CLI exit 1 is faults.test.ts's spawn test.
      const { summary } = await runHere(manifest, path.join(saved, 'batch.db'), path.join(dir, 'out'));
      const rows = await ledgerRows(path.join(saved, 'batch.db'));
      expect(summary.counts.in_doubt).toBe(printed.length);
      expect(byState(rows).in_doubt ?? 0).toBe(printed.length);
      expect(byState(rows).done).toBe(200 - printed.length);
      expect(sim.stats.duplicates()).toEqual([]);
      expect(sim.stats.accepted).toHaveLength(200);
      const acceptedIds = new Set(sim.stats.accepted.map((a) => a.requestId));
      for (const id of printed) expect(acceptedIds.has(id ?? '')).toBe(true);
    } finally {
      execFileSync('umount', [ledgerDir], { stdio: 'ignore' });
    }
  });

  it.runIf(canMountTmpfs())('a ledger whose disk fills while a large source is ingested: says so, sends nothing, and runs once there is room', async () => {
    sim = await startSimulator({ ...FAST });
    // More than SQLite's page cache of the ingest's rows: the cache spills into the -wal mid-ingest,
    // the disk fills, and SQLite rolls the whole transaction back itself.
    const rows = Array.from({ length: 8000 }, (_, i) => `r${i},${`line ${i} `.repeat(600).slice(0, 4900)}`);
    writeFileSync(path.join(dir, 'big.csv'), `id,text\n${rows.join('\n')}\n`);
    const manifest = path.join(dir, 'big.yaml');
    writeFileSync(
      manifest,
      'version: 1\ndefaults:\n  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }\nsources:\n  - csv: big.csv\n    type: txt2audio\n',
    );
    const ledgerDir = path.join(dir, 'ledger');
    expect(mountSmallTmpfs(ledgerDir, '2m')).toBe(true);
    const args = ['run', manifest, '--db', path.join(ledgerDir, 'big.db'), '--out', path.join(dir, 'out'), '--only', 'r1'];
    try {
      // The CLI's main in this process: the tests above show a full disk's exit 4 through a process.
      const full = await mainAgainst(sim, args);
      expect(hasStackTrace(full.stderr), full.stderr).toBe(false);
      expect(full.code, full.stderr).toBe(4);
      expect(full.stderr).toMatch(/cannot write the ledger .*big\.db: no space left on the device holding the ledger .*free space there, then run the same command again/);
      expect(sim.stats.calls.submit).toBe(0);

      execFileSync('mount', ['-o', 'remount,size=100m', ledgerDir], { stdio: 'ignore' });
      const again = await runHere(manifest, path.join(ledgerDir, 'big.db'), path.join(dir, 'out'), { select: { only: ['r1'] } });
      expect(again.picked).toEqual({ jobs: 1, done: 1 });
      expect(sim.stats.accepted).toHaveLength(1);
      expect(readdirSync(path.join(dir, 'out'))).toEqual(['r1.wav']);
    } finally {
      execFileSync('umount', [ledgerDir], { stdio: 'ignore' });
    }
  });
});
