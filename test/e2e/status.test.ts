import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/index.js';
import { hasStackTrace } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';
import { mainAgainst } from '../reliability/helpers.js';

const FAST = { pendingMs: { txt2audio: 20, img2video: 50 }, processingMs: { txt2audio: 60, img2video: 150 } };

/** A loopback port nobody listens on: a request there is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface StatusDoc {
  counts: Record<'pending' | 'submitted' | 'done' | 'failed' | 'in_doubt' | 'skipped', number>;
  spent: number;
  budget: number | null;
  jobs: { id: string; type: string; state: string; request_id: string | null; price: number; output: string | null; error: string | null }[];
}

describe('mediabatch status', () => {
  const workspace = useWorkspace();
  let sim: Simulator | undefined;
  let dir: string;

  beforeEach(() => {
    dir = workspace.dir;
  });

  it('reads the ledger alone after a run: no server, no token; --json has the documented fields', async () => {
    sim = await workspace.startSim({ ...FAST, jobErrorRate: 0.3, errorRetryable: false, seed: 7 });
    const manifest = await writeTtsManifest(dir, { jobs: 10, budget: 3 });
    // The CLI's main in this process, polling at the simulator's pace: faults.test.ts shows a run's exit 1 through a process.
    const run = await mainAgainst(sim, ['run', manifest, '--json']);
    const ran = JSON.parse(run.stdout) as StatusDoc;
    expect(ran.counts.failed).toBeGreaterThan(0);
    expect(ran.counts.done).toBeGreaterThan(0);
    expect(run.code).toBe(1);
    await sim.close();
    sim = undefined;

    const port = await closedPort();
    const json = await mainInProcess(['status', manifest, '--base-url', `http://127.0.0.1:${port}`, '--json']);
    expect(json.stderr).toBe('');
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout) as StatusDoc;
    expect(Object.keys(doc.counts)).toEqual(expect.arrayContaining(['pending', 'submitted', 'done', 'failed', 'in_doubt', 'skipped']));
    expect(doc.counts).toEqual(ran.counts);
    expect(doc.budget).toBe(3);
    expect(doc.spent).toBeCloseTo(ran.spent, 10);
    expect(doc.jobs).toHaveLength(10);
    for (const job of doc.jobs) {
      expect(Object.keys(job)).toEqual(expect.arrayContaining(['id', 'type', 'state', 'request_id', 'price', 'output', 'error']));
      expect(job.type).toBe('txt2audio');
      expect(typeof job.request_id).toBe('string');
      expect(job.price).toBeGreaterThan(0);
      if (job.state === 'done') {
        expect(job.output).toBe(path.join(dir, 'batch.out', `${job.id}.wav`));
        expect(existsSync(job.output!)).toBe(true);
        expect(readFileSync(job.output!).subarray(0, 4).toString()).toBe('RIFF');
        expect(job.error).toBeNull();
      } else {
        expect(job.state).toBe('failed');
        expect(job.error).toEqual(expect.any(String));
      }
    }
    // Done jobs are paid for; failed ones ended in a non-retryable error and are not counted as spent.
    const donePrices = doc.jobs.filter((j) => j.state === 'done').reduce((s, j) => s + j.price, 0);
    expect(doc.spent).toBeGreaterThanOrEqual(donePrices - 1e-12);

    const text = await mainInProcess(['status', manifest, '--base-url', `http://127.0.0.1:${port}`]);
    expect(text.code).toBe(0);
    expect(hasStackTrace(text.stderr)).toBe(false);
    for (const job of doc.jobs.filter((j) => j.state === 'failed')) {
      expect(text.stdout).toContain(job.id);
      expect(text.stdout).toContain(job.error);
    }
    expect(text.stdout).toMatch(new RegExp(`done +${doc.counts.done}\\n`));
    expect(text.stdout).toContain(`Results: ${doc.counts.done} file(s) in ${path.join(dir, 'batch.out')}`);
  });

  it('without a ledger yet says so clearly and sends nothing', async () => {
    const manifest = await writeTtsManifest(dir, { jobs: 2 });
    const result = await mainInProcess(['status', manifest, '--base-url', 'http://127.0.0.1:9']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim()).toBe(
      `mediabatch: no ledger at ${path.join(dir, 'batch.mediabatch.db')}: nothing has been run for ${manifest} yet (or pass --db PATH)`,
    );
    expect(existsSync(path.join(dir, 'batch.mediabatch.db'))).toBe(false);
  });

  it('after only a validate, an estimate or a failed command, says nothing has been run yet rather than an empty table', async () => {
    sim = await workspace.startSim();
    const manifest = await writeTtsManifest(dir, { jobs: 3, budget: 1 });
    const noLedger = `mediabatch: no ledger at ${path.join(dir, 'batch.mediabatch.db')}: nothing has been run for ${manifest} yet (or pass --db PATH)`;
    const nothingRun = `mediabatch: nothing has been run for ${manifest} yet: the ledger ${path.join(dir, 'batch.mediabatch.db')} records no job sent (or pass --db PATH)`;

    // A command that stops on its configuration leaves no ledger behind.
    const noToken = await mainInProcess(['estimate', manifest, '--base-url', sim.url]);
    expect(noToken.code).toBe(4);
    expect((await mainInProcess(['status', manifest])).stderr.trim()).toBe(noLedger);

    const env = { MEDIABATCH_TOKEN: sim.token };
    expect((await mainInProcess(['validate', manifest, '--base-url', sim.url], env)).code).toBe(0);
    expect((await mainInProcess(['estimate', manifest, '--base-url', sim.url, '--plan', 'unlimited'], env)).code).toBe(0);
    for (const json of [[], ['--json']]) {
      const result = await mainInProcess(['status', manifest, ...json]);
      expect(result.code).toBe(2);
      expect(result.stderr.trim()).toBe(nothingRun);
      // Under --json the same message is also a document on stdout; otherwise stdout stays empty.
      const expected = json.length > 0 ? { schema_version: 1, error: { code: 'E_USAGE', message: nothingRun.replace(/^mediabatch: /, ''), exit_code: 2 } } : undefined;
      expect(result.stdout === '' ? undefined : JSON.parse(result.stdout)).toEqual(expected);
    }
  });
});
