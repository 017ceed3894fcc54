import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY } from '../../src/runner/context.js';
import type { Simulator } from '../../src/sim/index.js';
import { hasStackTrace } from '../helpers/cli.js';
import { readRunJson, runInProcessResult } from '../helpers/in-process.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { byState, cliAgainst, FAST, ledgerRows, quickCheck, type StatusJson } from './helpers.js';
import { ownWorkspace } from '../helpers/workspace.js';

/**
 * Every fault the simulator injects, at a high rate on submits, then all of them mixed on every
 * endpoint. The money rule under test: a submit is retried only when the service provably did
 * not take it (503, 429); any other failure of a submit makes the job `in_doubt`, never resent.
 * The client cannot tell a 500 or 502 sent before the service took the job from one sent after,
 * nor a reset before from a reset after, so those are in doubt whichever side the simulator chose.
 * The runs are the runner's entry point in this process; one CLI run shows the exit code.
 */
const JOBS = 30;
const RATE = 0.3;

// Each test mostly waits (backoffs, Retry-After, slow answers) on a simulator of its own: side by side.
describe.concurrent('runs against a faulty service', () => {

  /**
   * One run of `manifest` in this process, as `run --json` would report it; a fatal error fails
   * the test. The CLI's number of retries (how long a burst of faults a call outlasts), but short
   * backoffs: which request draws a fault is the seeded order, not the time. The cap still lets
   * the simulator's Retry-After of 503s (1 s) be waited by the call, as the CLI's does.
   */
  async function runJson(sim: Simulator, dir: string, manifest: string): Promise<StatusJson> {
    const outDir = path.join(dir, 'batch.out');
    const ledgerPath = path.join(dir, 'batch.mediabatch.db');
    const { result } = await runInProcessResult({ manifest, ledgerPath, outDir, baseUrl: sim.url, token: sim.token, options: { retry: { ...DEFAULT_RETRY, minDelayMs: 10, maxDelayMs: 1000 } } });
    expect(result.outcome?.execute.fatal).toBeUndefined();
    return readRunJson<StatusJson>(outDir);
  }

  const ambiguous = ['500-before', '500-after', 'reset-before', 'reset-after', 'html502'] as const;

  const exactlyFaulted = 'submit:%s=0.3 puts exactly the faulted submits in doubt and never resends them';
  it.for(ambiguous)(exactlyFaulted, async (kind, { onTestFinished }) => {
    const { dir, startSim } = await ownWorkspace(onTestFinished);
    const sim = await startSim({ ...FAST, latencyMs: 5, faults: `submit:${kind}=${RATE}`, seed: 7 });
    const manifest = await writeTtsManifest(dir, { jobs: JOBS });
    const summary = await runJson(sim, dir, manifest);
    const faulted = sim.stats.faults[kind] ?? 0;
    expect(faulted).toBeGreaterThan(0);

    // One fault, one job in doubt: no retry of an ambiguous submit, and no other job touched.
    expect(summary.counts.in_doubt).toBe(faulted);
    expect(summary.counts.done).toBe(JOBS - faulted);
    expect(sim.stats.calls.submit).toBe(JOBS);
    expect(sim.stats.duplicates()).toEqual([]);
    for (const job of summary.jobs.filter((j) => j.state === 'in_doubt')) {
      expect(job.error, job.id).toMatch(/\S/);
      expect(job.request_id).toBeNull();
    }
    // Only the "after" kinds reach the service: what it accepted is the done jobs plus those.
    const expectedAccepted = kind.endsWith('-after') ? JOBS : JOBS - faulted;
    expect(sim.stats.accepted.length).toBe(expectedAccepted);

    expect((await runJson(sim, dir, manifest)).counts.in_doubt).toBe(faulted);
    expect(sim.stats.calls.submit).toBe(JOBS);
  });

  it('jobs left in doubt: the CLI run exits 1, without a stack trace, and sends none of them again', async (test) => {
    const { onTestFinished } = test;
    const { dir, startSim } = await ownWorkspace(onTestFinished);
    const sim = await startSim({ ...FAST, latencyMs: 5, faults: `submit:reset-after=${RATE}`, seed: 7 });
    const manifest = await writeTtsManifest(dir, { jobs: JOBS });
    const first = await cliAgainst(sim, ['run', manifest, '--json']);
    expect(hasStackTrace(first.stderr), first.stderr).toBe(false);
    const faulted = sim.stats.faults['reset-after'] ?? 0;
    expect(faulted).toBeGreaterThan(0);
    expect(first.code).toBe(1);
    expect((JSON.parse(first.stdout) as StatusJson).counts.in_doubt).toBe(faulted);
    // A second run sends none of them again and still counts them in doubt (so exits 1 again):
    // the runner's decision, shown in-process by the tests above for every ambiguous fault.
    expect((await runJson(sim, dir, manifest)).counts.in_doubt).toBe(faulted);
    expect(sim.stats.calls.submit).toBe(JOBS);
  });

  it('submit:503=0.3 is retried until taken: every job done, none in doubt, none twice', async ({ onTestFinished }) => {
    const { dir, startSim } = await ownWorkspace(onTestFinished);
    const sim = await startSim({ ...FAST, latencyMs: 5, faults: `submit:503=${RATE}`, seed: 7 });
    // Fewer jobs than the others: each 503 costs its job the simulator's Retry-After (1 s).
    const jobs = 12;
    const manifest = await writeTtsManifest(dir, { jobs });
    const firstSummary = await runJson(sim, dir, manifest);
    // A job refused six times in a row (0.3^6 per job; which request draws a fault depends on the
    // order requests arrive in) is left pending, not in doubt: the next run sends it.
    expect(firstSummary.counts.in_doubt).toBe(0);
    expect(firstSummary.counts.done + firstSummary.counts.pending, JSON.stringify(firstSummary.counts)).toBe(jobs);
    const summary = firstSummary.counts.pending === 0 ? firstSummary : await runJson(sim, dir, manifest);
    expect(summary.counts.done).toBe(jobs);
    expect(summary.counts.in_doubt).toBe(0);
    expect(sim.stats.faults['503']).toBeGreaterThan(0);
    expect(sim.stats.calls.submit).toBe(jobs + (sim.stats.faults['503'] ?? 0));
    expect(sim.stats.accepted.length).toBe(jobs);
    expect(sim.stats.duplicates()).toEqual([]);
  });

  it('slow=0.3 (answers late, within the client timeout) costs time only: every job done', async (test) => {
    const { onTestFinished } = test;
    const { dir, startSim } = await ownWorkspace(onTestFinished);
    const sim = await startSim({ ...FAST, latencyMs: 5, faults: `slow=${RATE}`, slowMs: 100, seed: 7 });
    const manifest = await writeTtsManifest(dir, { jobs: JOBS });
    expect((await runJson(sim, dir, manifest)).counts.done).toBe(JOBS);
    expect(sim.stats.faults['slow']).toBeGreaterThan(0);
    expect(sim.stats.accepted.length).toBe(JOBS);
    expect(sim.stats.duplicates()).toEqual([]);
  });

  const mixed = 'every fault mixed on every endpoint, and jobs failing at the service: each job ends done, in doubt or failed with a reason';
  it(mixed, async ({ onTestFinished }) => {
    const { dir, startSim } = await ownWorkspace(onTestFinished);
    const sim = await startSim({
      ...FAST,
      latencyMs: 5,
      faults: '503=0.1,500-before=0.04,500-after=0.04,reset-before=0.04,reset-after=0.04,slow=0.04,html502=0.04',
      slowMs: 200,
      jobErrorRate: 0.1,
      errorRetryable: false,
      seed: 11,
    });
    const manifest = await writeTtsManifest(dir, { jobs: 60 });
    const db = path.join(dir, 'batch.mediabatch.db');
    // A status call can fail all its retries; the job then stays `submitted` and the next run
    // collects it. Three runs leave nothing running.
    let summary: StatusJson | undefined;
    for (let attempt = 0; attempt < 3; attempt += 1) {
      summary = await runJson(sim, dir, manifest);
      if (summary.counts.submitted === 0) break;
    }
    expect(summary).toBeDefined();
    const { counts, jobs } = summary as StatusJson;
    expect(counts.done + counts.in_doubt + counts.failed).toBe(60);
    expect(counts.failed).toBeGreaterThan(0);
    for (const job of jobs.filter((j) => j.state !== 'done')) expect(job.error, job.id).toMatch(/\S/);
    expect(sim.stats.duplicates()).toEqual([]);
    // Each job in doubt comes from an ambiguous submit fault; never more of them than faults.
    const ambiguousSubmits = ambiguous.reduce((n, k) => n + (sim.stats.faults[k] ?? 0), 0);
    expect(counts.in_doubt).toBeLessThanOrEqual(ambiguousSubmits);
    expect(byState(await ledgerRows(db))['submitting']).toBeUndefined();
    expect(quickCheck(db)).toBe('ok');

    const submits = sim.stats.calls.submit;
    await runJson(sim, dir, manifest);
    expect(sim.stats.calls.submit).toBe(submits);
  });
});
