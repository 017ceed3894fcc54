import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/index.js';
import { hasStackTrace, tempDir, type CliResult } from '../helpers/cli.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { byState, cliAgainst, collect, delay, FAST, ledgerRows, prng, quickCheck, startAgainst, type StatusJson } from './helpers.js';

/**
 * A run killed again and again at random moments, resumed each time, then finished. Startup of
 * the CLI takes a few hundred ms, so the kill moments cover startup, pricing, submitting,
 * following and downloading. The seed is printed so a failure can be replayed.
 */
const JOBS = 120;
const KILLS = 10;
const SEED = Number(process.env['RELIABILITY_SEED'] ?? Date.now() % 1_000_000);

/**
 * When to stop the n-th run. Even runs: a random moment after the spawn, often still in startup
 * or pricing. Odd runs: a random moment after this run's own submits start reaching the
 * simulator (or it started following), so the stop lands mid-submit while there is work left;
 * a run that ends first (nothing left to do) is not waited for.
 */
async function stopMoment(sim: Simulator, n: number, random: () => number, ended: () => boolean): Promise<void> {
  if (n % 2 === 0) return delay(150 + Math.floor(random() * 750));
  const calls = sim.stats.calls.submit + sim.stats.calls.status;
  while (sim.stats.calls.submit + sim.stats.calls.status < calls + 3 && !ended()) await delay(5);
  return delay(Math.floor(random() * 250));
}

/** A spawned run and whether it has ended yet. */
interface StartedRun {
  child: ChildProcess;
  result: Promise<CliResult>;
  ended: () => boolean;
}

function startRun(sim: Simulator, manifest: string): StartedRun {
  const child = startAgainst(sim, ['run', manifest, '--concurrency', '4']);
  let over = false;
  const result = collect(child).finally(() => (over = true));
  return { child, result, ended: () => over };
}

/**
 * A folder and a simulator of the test's own, removed and closed afterwards: the two tests run
 * side by side (each mostly waits for its CLI), so they cannot share the per-test workspace.
 */
async function inOwnSpace(test: (dir: string, sim: Simulator) => Promise<void>): Promise<void> {
  const { dir, cleanup } = await tempDir();
  const sim = await startSimulator({ ...FAST, latencyMs: 50, seed: SEED });
  try {
    await test(dir, sim);
  } finally {
    await sim.close();
    await cleanup();
  }
}

describe.concurrent(`a run stopped over and over (seed ${SEED})`, () => {
  const killed = 'SIGKILL at random moments: nothing accepted twice, and only jobs caught mid-submit end in doubt';
  it(killed, () => inOwnSpace(async (dir, sim) => {
    const manifest = await writeTtsManifest(dir, { jobs: JOBS });
    const db = path.join(dir, 'batch.mediabatch.db');
    const random = prng(SEED);
    const caughtSubmitting = new Set<string>();

    for (let kill = 0; kill < KILLS; kill += 1) {
      const { child, result: ended, ended: hasEnded } = startRun(sim, manifest);
      await stopMoment(sim, kill, random, hasEnded);
      child.kill('SIGKILL');
      const result = await ended;
      // A run that finished before the kill is fine too; any other ending is not.
      if (result.signal !== 'SIGKILL') expect(result.code, result.stderr).toBe(0);
      for (const row of await ledgerRows(db)) if (row.state === 'submitting') caughtSubmitting.add(row.id);
      if (existsSync(db)) expect(quickCheck(db)).toBe('ok');
    }

    // The odd kills land while submits are in flight: at least one must have caught a row mid-submit.
    expect(caughtSubmitting.size).toBeGreaterThan(0);
    const final = await cliAgainst(sim, ['run', manifest, '--json']);
    expect(hasStackTrace(final.stderr), final.stderr).toBe(false);
    const summary = JSON.parse(final.stdout) as StatusJson;
    expect(final.code).toBe(caughtSubmitting.size === 0 ? 0 : 1);

    expect(sim.stats.duplicates()).toEqual([]);
    const inDoubt = summary.jobs.filter((j) => j.state === 'in_doubt').map((j) => j.id);
    // Every row left `submitting` by a kill became in doubt on the next run, and nothing else did.
    expect(new Set(inDoubt)).toEqual(caughtSubmitting);
    expect(summary.counts.done + summary.counts.in_doubt).toBe(JOBS);
    for (const job of summary.jobs.filter((j) => j.state === 'done')) {
      expect(job.output).not.toBeNull();
      expect(statSync(job.output as string).size).toBeGreaterThan(0);
      expect(existsSync(`${job.output as string}.part`)).toBe(false);
    }
    // What the service took is what the ledger knows: every done job was accepted exactly once.
    const accepted = new Set(sim.stats.accepted.map((a) => a.requestId));
    for (const job of summary.jobs.filter((j) => j.state === 'done')) expect(accepted.has(job.request_id as string)).toBe(true);
    expect(sim.stats.accepted.length).toBeGreaterThanOrEqual(summary.counts.done);
    expect(sim.stats.accepted.length).toBeLessThanOrEqual(JOBS);

    // A plain run again sends none of the jobs in doubt; --resubmit-in-doubt sends each exactly once more.
    const before = sim.stats.calls.submit;
    const again = await cliAgainst(sim, ['run', manifest, '--json']);
    expect(again.code).toBe(inDoubt.length === 0 ? 0 : 1);
    expect(sim.stats.calls.submit).toBe(before);
    if (inDoubt.length > 0) {
      const resent = await cliAgainst(sim, ['run', manifest, '--resubmit-in-doubt', '--json']);
      expect(resent.code, resent.stderr).toBe(0);
      expect(sim.stats.calls.submit).toBe(before + inDoubt.length);
      expect(byState(await ledgerRows(db))).toEqual({ done: JOBS });
    }
  }));

  const stopped = 'SIGTERM at random moments: exit 130 each time, nothing in doubt, everything done once';
  it(stopped, () => inOwnSpace(async (dir, sim) => {
    const manifest = await writeTtsManifest(dir, { jobs: JOBS });
    const db = path.join(dir, 'batch.mediabatch.db');
    const random = prng(SEED + 1);

    for (let stop = 0; stop < KILLS; stop += 1) {
      const { child, result: ended, ended: hasEnded } = startRun(sim, manifest);
      await stopMoment(sim, stop, random, hasEnded);
      child.kill('SIGTERM');
      const result = await ended;
      expect(hasStackTrace(result.stderr), result.stderr).toBe(false);
      if (result.signal === 'SIGTERM') {
        // Node itself was still booting (it takes 100–250 ms on a busy machine): none of our code
        // ran, so there was nothing to stop. From the first line of main.js on, the answer is 130.
        expect(result.stderr).toBe('');
      } else if (result.code !== 0) {
        expect({ code: result.code, stderr: result.stderr }).toMatchObject({ code: 130 });
      }
      expect(byState(await ledgerRows(db))['submitting'] ?? 0).toBe(0);
    }

    const final = await cliAgainst(sim, ['run', manifest, '--json']);
    expect(final.code, final.stderr).toBe(0);
    const summary = JSON.parse(final.stdout) as StatusJson;
    expect(summary.counts.done).toBe(JOBS);
    expect(summary.counts.in_doubt).toBe(0);
    expect(sim.stats.duplicates()).toEqual([]);
    expect(sim.stats.accepted.length).toBe(JOBS);
    expect(quickCheck(db)).toBe('ok');
  }));
});
