import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/index.js';
import { hasStackTrace, tempDir } from '../helpers/cli.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { byState, cliAgainst, FAST, ledgerRows, quickCheck } from './helpers.js';

/**
 * A results folder that fills up mid-run. Where this machine lets us mount a tmpfs (CI runs as
 * root), the folder is a 64 KB one: a few WAV results fit, the next write meets ENOSPC. Where
 * it does not, the folder is a path below a regular file (ENOTDIR), which fails at the first
 * write instead; the product's answer must be the same clear stop either way.
 */
function mountSmallTmpfs(target: string): boolean {
  mkdirSync(target, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', target], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
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

  it('stops with a clear message and exit 4, loses no request id, and finishes once there is room', async () => {
    sim = await startSimulator({ ...FAST });
    const manifest = await writeTtsManifest(dir, { jobs: 24 });
    const db = path.join(dir, 'batch.mediabatch.db');

    const full = await cliAgainst(sim, ['run', manifest, '--out', out]);
    expect(hasStackTrace(full.stderr), full.stderr).toBe(false);
    expect(full.code, full.stderr).toBe(4);
    expect(full.stderr).toMatch(mounted ? /ENOSPC|no space/i : /results|folder|ENOTDIR/i);
    expect(quickCheck(db)).toBe('ok');
    const rows = ledgerRows(db);
    // Every job the service took is recorded with its request id; none is lost or in doubt.
    expect(rows.filter((r) => r.state === 'in_doubt')).toEqual([]);
    for (const row of rows.filter((r) => r.state === 'submitted' || r.state === 'done')) expect(row.request_id).not.toBeNull();
    expect(sim.stats.accepted.length).toBe(rows.filter((r) => r.request_id !== null).length);
    if (mounted) {
      // Some results fitted and are complete; no half-written `.part` is left behind.
      expect(readdirSync(out).filter((f) => f.endsWith('.part'))).toEqual([]);
      expect(byState(rows).done ?? 0).toBeGreaterThan(0);
    }

    const roomy = path.join(dir, 'roomy');
    const again = await cliAgainst(sim, ['run', manifest, '--out', roomy]);
    expect(again.code, again.stderr).toBe(0);
    expect(byState(ledgerRows(db))).toEqual({ done: 24 });
    expect(sim.stats.duplicates()).toEqual([]);
    expect(sim.stats.accepted).toHaveLength(24);
  });
});
