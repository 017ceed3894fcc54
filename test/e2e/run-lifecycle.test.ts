import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServiceClient } from '../../src/api/client.js';
import { openManifest } from '../../src/manifest/open.js';
import { pollingCompletion } from '../../src/runner/follow.js';
import { createRunDeps, DEFAULT_RETRY, pollEvery } from '../../src/runner/context.js';
import { executePlan } from '../../src/runner/execute.js';
import { Downstream } from '../../src/runner/downstream.js';
import { SplitJoins } from '../../src/runner/join-splits.js';
import { ingestManifest } from '../../src/runner/ingest.js';
import { planFromLedger } from '../../src/runner/run.js';
import { Pace } from '../../src/runner/pace.js';
import type { Simulator } from '../../src/sim/index.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { FAST, ledgerRows, simArgs } from '../reliability/helpers.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { describeEvent } from '../../src/cli/event-text.js';
import { readRunJson, runInProcessResult, type InProcessRun } from '../helpers/in-process.js';
import { forward, speechManifest, startProxy, startScripted, type Scripted } from '../security/servers.js';
import { useWorkspace } from '../helpers/workspace.js';
import { openSqliteLedger } from '../../src/store/index.js';
import { systemClock } from '../../src/clock.js';
import { eventsFor } from '../support/events.js';

describe('run: the life of a job after its submit', () => {
  const workspace = useWorkspace();
  let sim: Simulator;
  let proxy: Scripted | undefined;
  let dir: string;

  beforeEach(() => {
    dir = workspace.dir;
  });
  /** A run of `<name>.yaml` as the CLI lays out its files, in-process against `url`. */
  const inProcess = (url: string, manifest: string, name: string): InProcessRun => ({
    manifest,
    ledgerPath: path.join(dir, `${name}.mediabatch.db`),
    outDir: path.join(dir, `${name}.out`),
    baseUrl: url,
    token: sim.token,
  });
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  it('refreshes an expired result URL through the status endpoint and still downloads the result', async () => {
    sim = await workspace.startSim({ ...FAST });
    // The first result URL given for each job has already expired (the simulator answers 403);
    // asking for the status again gives a fresh one.
    const handedOut = new Set<string>();
    proxy = await startProxy(sim.url, {
      resultUrl: (text, original) => {
        if (handedOut.has(text)) return original;
        handedOut.add(text);
        const url = new URL(original);
        url.searchParams.set('expires', String(Date.now() - 60_000));
        return url.toString();
      },
    });
    const manifest = path.join(dir, 'expiry.yaml');
    await writeFile(manifest, speechManifest([1, 2, 3].map((i) => ({ id: `clip-${i}`, text: `expiring url ${i}` }))));
    const { result } = await runInProcessResult(inProcess(proxy.url, manifest, 'expiry'));
    expect(result.summary.counts).toMatchObject({ done: 3 });
    const rows = await ledgerRows(path.join(dir, 'expiry.mediabatch.db'));
    expect(rows.map((r) => r.state)).toEqual(['done', 'done', 'done']);
    for (const row of rows) expect(readFileSync(row.result_path ?? '').subarray(0, 4).toString()).toBe('RIFF');
    expect(handedOut.size).toBe(3);
    // Each job's first download was refused as expired, then fetched again from a fresh URL.
    expect(sim.stats.calls.download).toBe(6);
    expect(sim.stats.accepted).toHaveLength(3);
  });

  it('with --retries 0 (here MEDIABATCH_RETRIES=0) a job that ended in a retryable, refunded error stays failed; a later run sends it again, never a finished one', async () => {
    sim = await workspace.startSim({ ...FAST, jobErrorRate: 0.5, errorRetryable: true, seed: 7 });
    const manifest = await writeTtsManifest(dir, { jobs: 16 });
    // The CLI's main in this process: the variable read as the flag, the exit and the document.
    const first = await mainInProcess(['run', manifest, '--json', ...simArgs(sim)], { MEDIABATCH_TOKEN: sim.token, MEDIABATCH_RETRIES: '0' });
    const counts = (JSON.parse(first.stdout) as { counts: Record<'failed' | 'done', number> }).counts;
    expect(first.code).toBe(1);
    // The errored ones stay failed (retryable, refunded), each sent once: the next run sends them again.
    expect(counts.failed).toBeGreaterThan(0);
    expect(counts.done + counts.failed).toBe(16);
    expect(sim.stats.accepted).toHaveLength(16);
    expect(first.stderr).not.toContain('--retries)');

    // The later runs in-process, with the same setting: what they send is the runner's decision.
    const again = { ...inProcess(sim.url, manifest, 'batch'), retryFailed: 0 };
    let runs = 1;
    let counts2 = (await runInProcessResult(again)).result.summary.counts;
    while (counts2.done !== 16 && runs < 12) {
      counts2 = (await runInProcessResult(again)).result.summary.counts;
      runs += 1;
    }
    expect(counts2).toMatchObject({ done: 16, failed: 0 });
    expect(sim.stats.duplicates()).toEqual([]);
    // Every re-acceptance followed a refunded error: more acceptances than jobs, no double payment.
    expect(sim.stats.accepted.length).toBeGreaterThan(16);
    expect((await ledgerRows(path.join(dir, 'batch.mediabatch.db'))).every((row) => row.state === 'done')).toBe(true);
  });

  it('by default sends a job that failed at the service, retryable and refunded, again within the run, at most twice more', async () => {
    sim = await workspace.startSim({ ...FAST, jobErrorRate: 0.5, errorRetryable: true, seed: 7 });
    const manifest = await writeTtsManifest(dir, { jobs: 16 });
    // One submit at a time: the simulator's outcomes follow its seed in the order jobs are taken.
    const { events, result } = await runInProcessResult({ ...inProcess(sim.url, manifest, 'batch'), concurrency: 1 });

    const ledger = await openSqliteLedger(path.join(dir, 'batch.mediabatch.db'), { mode: 'read-only' });
    const sends = new Map<string, { sent: number; failed: number; state: string }>();
    try {
      for (const job of await ledger.readJobs({ scope: 'all', limit: 100 })) {
        const events = await eventsFor(ledger, job.id);
        sends.set(job.id, { sent: events.filter((e) => e.kind === 'reserved').length, failed: events.filter((e) => e.kind === 'failed').length, state: job.state });
      }
    } finally {
      await ledger.close();
    }
    const jobs = [...sends.values()];
    // A job ends failed only after three sends that all failed; a done one after its failures, if any.
    for (const job of jobs) {
      expect(job.sent).toBeLessThanOrEqual(3);
      if (job.state === 'failed') expect([job.sent, job.failed]).toEqual([3, 3]);
      else expect([job.state, job.failed]).toEqual(['done', job.sent - 1]);
    }
    expect(jobs.filter((job) => job.state === 'done' && job.failed > 0).length, 'jobs healed within the run').toBeGreaterThan(0);
    // What the run reports (its exit code is 0 only when every job is done) is what the ledger holds.
    const failedJobs = jobs.filter((job) => job.state === 'failed').length;
    expect(result.summary.counts).toMatchObject({ done: jobs.length - failedJobs, failed: failedJobs });
    expect(sim.stats.accepted).toHaveLength(jobs.reduce((n, job) => n + job.sent, 0));
    expect(sim.stats.duplicates()).toEqual([]);
    // One retry pass per round of failures, each with the jobs failed that many times.
    const passes = events.filter((event) => event.kind === 'retry_pass');
    const expected = [1, 2].map((n) => ({ kind: 'retry_pass', pass: n, passes: 2, jobs: jobs.filter((job) => job.failed >= n).length })).filter((pass) => pass.jobs > 0);
    expect(passes).toEqual(expected);
    // The line the CLI prints for it.
    expect(describeEvent(passes[0]!, 0)).toBe(`retrying ${expected[0]!.jobs} job(s) that failed at the service (retryable, refunded): pass 1 of 2 (--retries)`);
  });

  it('stops sending at the budget even when the plan did not foresee it (the per-job reservation)', async () => {
    sim = await workspace.startSim({ ...FAST });
    const manifest = await openManifest(await writeTtsManifest(dir, { jobs: 20 }));
    const ledger = await openSqliteLedger(path.join(dir, 'budget.mediabatch.db'), { mode: 'read-write' });
    const client = createServiceClient({ baseUrl: sim.url, token: sim.token });
    const halt = new AbortController();
    try {
      await ingestManifest({ manifest, ledger });
      const send = { resubmitInDoubt: false };
      const groups = await ledger.priceGroups(send);
      await ledger.applyPrices(groups.flatMap((g) => g.lengths.map((l) => ({ priceKey: `${g.groupKey}|chars=${l.chars}`, priceMicro: 1_000_000, source: 'quoted' }))), send);
      // A plan made without a cap sends all 20; the run itself holds a cap of 5.5: only the
      // reservation before each submit can stop it, whatever the concurrency.
      const plan = await planFromLedger(ledger, send, null, false);
      expect(plan.send.jobs).toBe(20);
      const deps = createRunDeps({
        client,
        ledger,
        pace: new Pace({}),
        clock: systemClock,
        options: {
          concurrency: 8,
          budgetMicro: 5_500_000,
          noWait: true,
          resubmitInDoubt: false,
          outDir: path.join(dir, 'out'),
          retry: DEFAULT_RETRY,
          maxResultBytes: 1e7,
          retryFailed: 0,
        },
        stop: halt.signal,
        emit: () => undefined,
      });
      const downstream = new Downstream(new SplitJoins(deps));
      const completion = pollingCompletion(deps, downstream, pollEvery(20));
      await executePlan(deps, { completion, downstream }, plan, send, { userStop: halt.signal, halt });
      expect(await ledger.spentMicro()).toBe(5_000_000);
      expect(await ledger.countsByState()).toMatchObject({ submitted: 5, skipped: 15 });
      expect(sim.stats.accepted).toHaveLength(5);
    } finally {
      await client.close();
      await ledger.close();
    }
  });

  it('collects a job removed from the manifest after it was sent', async () => {
    sim = await workspace.startSim({ ...FAST });
    const manifest = path.join(dir, 'dropped.yaml');
    const jobs = [1, 2, 3].map((i) => ({ id: `clip-${i}`, text: `dropped later ${i}` }));
    await writeFile(manifest, speechManifest(jobs));
    const first = await runInProcessResult({ ...inProcess(sim.url, manifest, 'dropped'), noWait: true });
    expect(first.result.summary.counts).toMatchObject({ submitted: 3 });
    await writeFile(manifest, speechManifest(jobs.slice(0, 2)));

    const { result } = await runInProcessResult(inProcess(sim.url, manifest, 'dropped'));
    expect(result.summary.counts).toMatchObject({ done: 3, submitted: 0 });
    const rows = await ledgerRows(path.join(dir, 'dropped.mediabatch.db'));
    expect(rows.map((r) => [r.id, r.state])).toEqual([
      ['clip-1', 'done'],
      ['clip-2', 'done'],
      ['clip-3', 'done'],
    ]);
    expect(readFileSync(path.join(dir, 'dropped.out', 'clip-3.wav')).subarray(0, 4).toString()).toBe('RIFF');
    expect(sim.stats.accepted).toHaveLength(3);
  });

  it('a dropped job whose result cannot be collected yet keeps the run from saying every job is done', async () => {
    sim = await workspace.startSim({ ...FAST });
    const manifest = path.join(dir, 'dropped.yaml');
    const jobs = [1, 2, 3].map((i) => ({ id: `clip-${i}`, text: `dropped later ${i}` }));
    await writeFile(manifest, speechManifest(jobs));
    const first = await runInProcessResult({ ...inProcess(sim.url, manifest, 'dropped'), noWait: true });
    expect(first.result.summary.counts).toMatchObject({ submitted: 3 });
    const dropped = (await ledgerRows(path.join(dir, 'dropped.mediabatch.db'))).find((r) => r.id === 'clip-3')?.request_id;
    expect(dropped).toBeTypeOf('string');
    await writeFile(manifest, speechManifest(jobs.slice(0, 2)));
    // The service cannot answer for that one request right now.
    proxy = await startProxy(sim.url, {
      any: (req) => (req.url.includes(`/request-status/${dropped}`) ? { status: 500, body: '{"message":"Server Error"}' } : undefined),
    });

    const { result } = await runInProcessResult(inProcess(proxy.url, manifest, 'dropped'));
    // Not every job done: what makes the CLI's exit code 1.
    expect(result.summary.counts).toMatchObject({ done: 2, submitted: 1 });
    const doc = await readRunJson<{ counts: Record<string, number>; jobs: { id: string; state: string; request_id: string; in_manifest: boolean }[] }>(path.join(dir, 'dropped.out'));
    expect(doc.counts).toMatchObject({ done: 2, submitted: 1 });
    expect(doc.jobs.find((j) => j.id === 'clip-3')).toMatchObject({ state: 'submitted', request_id: dropped, in_manifest: false });
    expect(sim.stats.accepted).toHaveLength(3);
  });

  it('a service that answers one request id for several jobs: the later jobs go in doubt, one result is kept', async () => {
    sim = await workspace.startSim({ ...FAST });
    let firstRequestId: string | undefined;
    proxy = await startScripted(async (req) => {
      if (req.method !== 'POST' || !req.url.endsWith('/txt2audio')) return forward(sim.url, req);
      if (firstRequestId !== undefined) return { status: 200, body: JSON.stringify({ data: { request_id: firstRequestId } }) };
      const reply = await forward(sim.url, req);
      firstRequestId = (JSON.parse(reply.body.toString()) as { data: { request_id: string } }).data.request_id;
      return reply;
    });
    const manifest = path.join(dir, 'same-id.yaml');
    await writeFile(manifest, speechManifest(['a', 'b', 'c'].map((name) => ({ id: `clip-${name}`, text: `same id ${name}` }))));

    const { events, result } = await runInProcessResult({ ...inProcess(proxy.url, manifest, 'same-id'), concurrency: 1 });
    expect(result.summary.counts).toMatchObject({ done: 1, in_doubt: 2 });
    const rows = await ledgerRows(path.join(dir, 'same-id.mediabatch.db'));
    expect(rows.map((r) => [r.id, r.state, r.request_id])).toEqual([
      ['clip-a', 'done', firstRequestId],
      ['clip-b', 'in_doubt', null],
      ['clip-c', 'in_doubt', null],
    ]);
    expect(rows[1]?.last_error).toMatch(/already given to job "clip-a"/);
    const inDoubt = events.find((event) => event.kind === 'in_doubt' && event.id === 'clip-b');
    expect(inDoubt && describeEvent(inDoubt, 0)).toMatch(/in doubt clip-b: the service answered request id .+, already given to job "clip-a"/);
    expect(readdirSync(path.join(dir, 'same-id.out'))).toEqual(['clip-a.wav']);
  });
});
