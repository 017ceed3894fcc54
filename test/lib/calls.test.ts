import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManifestError } from '../../src/manifest/errors.js';
import { estimate, run, validate } from '../../src/lib/calls.js';
import type { JobObject, ManifestObject } from '../../src/lib/manifest-input.js';
import type { RunEvent } from '../../src/runner/index.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';

const SPEECH = { model: 'Kokoro', voice: 'af_sky', lang: 'en-us', speed: 1, format: 'wav', sample_rate: 24000 };

function speechJobs(count: number): JobObject[] {
  return Array.from({ length: count }, (_, i) => ({ id: `line-${i}`, type: 'txt2audio', ...SPEECH, text: `Line number ${i}.` }));
}

async function* streamed(jobs: JobObject[]): AsyncGenerator<JobObject> {
  for (const job of jobs) yield job;
}

function thrown(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('expected a rejection'),
    (error: unknown) => error,
  );
}

describe('the library, in process', () => {
  const ws = useWorkspace();

  it('takes a manifest as a file path, a value, an array of jobs or an async iterable of them', async () => {
    const file = await writeTtsManifest(ws.dir, { jobs: 3 });
    const value: ManifestObject = { version: 1, jobs: speechJobs(3) };
    expect(await validate(file)).toEqual({ jobs: 3, offline: true });
    expect(await validate(value)).toEqual({ jobs: 3, offline: true });
    expect(await validate(speechJobs(4))).toEqual({ jobs: 4, offline: true });
    expect(await validate(streamed(speechJobs(5)))).toEqual({ jobs: 5, offline: true });
    expect(await validate(value, { sim: true })).toEqual({ jobs: 3, offline: false });
  });

  it('reports every problem of a value or of jobs at once, each located by job and field', async () => {
    const jobs: JobObject[] = [...speechJobs(1), { id: 'bad', type: 'txt2audio', ...SPEECH, text: 'x', speed: -1 }, { type: 'txt2audio', ...SPEECH, text: 'y', colour: 'red' }];
    const fromJobs = await thrown(validate(jobs));
    expect(fromJobs).toBeInstanceOf(ManifestError);
    const issues = (fromJobs as ManifestError).issues;
    expect(issues.map((issue) => [issue.file, issue.line, issue.jobId, issue.field])).toEqual([
      ['<jobs>', 2, 'bad', 'speed'],
      ['<jobs>', 3, expect.stringMatching(/^txt2audio-[0-9a-f]+$/), 'colour'],
    ]);
    const fromValue = await thrown(validate({ version: 1, jobs }));
    expect((fromValue as ManifestError).issues.map((issue) => [issue.file, issue.jobId, issue.field])).toEqual([
      ['<manifest>', 'bad', 'speed'],
      ['<manifest>', expect.stringMatching(/^txt2audio-/), 'colour'],
    ]);
    expect(fromValue).toMatchObject({ code: 'E_MANIFEST', exitCode: 2 });
  });

  it('estimates a value and runs jobs streamed from an async iterable, as the CLI runs stdin, events to the callback and the feed alike', async () => {
    const db = path.join(ws.dir, 'jobs.mediabatch.db');
    const out = path.join(ws.dir, 'out');
    const report = await estimate({ version: 1, jobs: speechJobs(4) }, { sim: true, db, budget: 5 });
    expect(report).toMatchObject({ jobs: 4, withinBudget: true, spentMicro: 0 });
    expect(existsSync(path.join(ws.dir, 'jobs.estimate.json'))).toBe(true);
    const called: RunEvent[] = [];
    const batch = run(streamed(speechJobs(4)), { sim: true, db, out, onEvent: (event) => called.push(event) });
    const fed: RunEvent[] = [];
    for await (const event of batch.events) fed.push(event);
    const summary = await batch;
    expect(summary.exitCode).toBe(0);
    expect(summary.summary.counts.done).toBe(4);
    expect(fed).toEqual(called);
    expect(fed.filter((event) => event.kind === 'done').map((event) => event.id).sort()).toEqual(['line-0', 'line-1', 'line-2', 'line-3']);
    expect(readdirSync(out).sort()).toEqual(['line-0.wav', 'line-1.wav', 'line-2.wav', 'line-3.wav']);
  });

  it('a signal aborted before anything is sent stops the run at once: exit code 130, nothing sent, the next call sends all', async () => {
    const sim = await ws.startSim();
    const options = { baseUrl: sim.url, token: sim.token, pollMs: 10 };
    const file = await writeTtsManifest(ws.dir, { jobs: 3 });
    const stopped = await run(file, { ...options, signal: AbortSignal.abort() });
    expect(stopped.exitCode).toBe(130);
    expect(stopped.outcome).toBeUndefined();
    expect(sim.stats.accepted).toHaveLength(0);
    expect((await run(file, options)).exitCode).toBe(0);
    expect(sim.stats.accepted).toHaveLength(3);
  });

  it('a callback that throws stops the run as a signal does, and the call rejects with its error; nothing is left in doubt', async () => {
    const sim = await ws.startSim({ latencyMs: 20 });
    const options = { baseUrl: sim.url, token: sim.token, pollMs: 10, concurrency: 1 };
    const file = await writeTtsManifest(ws.dir, { jobs: 6 });
    const mistake = new Error('a bug in the caller');
    const failed = await thrown(run(file, { ...options, onEvent: (event) => {
      if (event.kind === 'submitted') throw mistake;
    } }));
    expect(failed).toBe(mistake);
    const sent = sim.stats.accepted.length;
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThan(6);
    const resumed = await run(file, options);
    expect(resumed.summary.counts).toMatchObject({ done: 6, in_doubt: 0 });
    expect(sim.stats.accepted).toHaveLength(6);
    expect(sim.stats.duplicates()).toEqual([]);
  });

  it('rejects with the typed error a run ends with: a refused budget is a BudgetError (exit code 3), nothing sent', async () => {
    const sim = await ws.startSim();
    const file = await writeTtsManifest(ws.dir, { jobs: 3 });
    const refused = await thrown(run(file, { baseUrl: sim.url, token: sim.token, budget: 0.000001 }));
    expect(refused).toMatchObject({ name: 'BudgetError', code: 'E_BUDGET', exitCode: 3 });
    const wrongToken = await thrown(run(file, { baseUrl: sim.url, token: 'not-the-token' }));
    expect(wrongToken).toMatchObject({ name: 'AuthError', exitCode: 4 });
    expect(sim.stats.accepted).toHaveLength(0);
  });
});
