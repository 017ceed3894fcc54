/**
 * A run's documents (run.json, run.csv) and its review page are written from the ledger when the
 * run ends; a run that changed nothing leaves them as they are (a million jobs took 20 s to
 * write again), and anything that would change them writes them again. The first run is the
 * CLI's (it names the files); the runs after it are the runner's entry point in this process.
 */
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/index.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { runInProcessResult } from '../helpers/in-process.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';

const FAST = { pendingMs: { txt2audio: 20 }, processingMs: { txt2audio: 40 } };

describe('run: documents written again only when they would change', () => {
  const workspace = useWorkspace();

  it('leaves them as they are after a run that changed nothing, and writes them again after any change or a file touched', async () => {
    const sim: Simulator = await workspace.startSim({ ...FAST });
    const dir = workspace.dir;
    const manifest = await writeTtsManifest(dir, { jobs: 4, budget: 5 });
    const files = ['batch.run.json', 'batch.run.csv', 'batch.report.html'].map((name) => path.join(dir, name));
    const cli = async (): Promise<void> => {
      // The CLI's main in this process, polling the simulator at its pace rather than the service's.
      const result = await mainInProcess(['run', manifest, '--base-url', sim.url, '--plan', 'unlimited', '--poll-ms', '50'], { MEDIABATCH_TOKEN: sim.token });
      expect(result.code, result.stderr).toBe(0);
    };
    const [runJson, runCsv, reportHtml] = files as [string, string, string];
    const runFiles = { db: path.join(dir, 'batch.mediabatch.db'), out: path.join(dir, 'batch.out'), runJson, runCsv, reportHtml, legacyReport: path.join(dir, 'batch.report.json') };
    /** `run` in this process, into the files the CLI writes; `budgetUsd` as --budget. */
    const runHere = async (budgetUsd?: number): Promise<void> => {
      const budgetMicro = budgetUsd === undefined ? undefined : budgetUsd * 1e6;
      const { result } = await runInProcessResult({ manifest, ledgerPath: runFiles.db, outDir: runFiles.out, files: runFiles, baseUrl: sim.url, token: sim.token, budgetMicro });
      expect(result.outcome?.execute.fatal).toBeUndefined();
      expect(result.summary.counts.done).toBe(jobsIn().length);
    };
    const stamps = (): string[] => files.map((file) => {
      const info = statSync(file);
      return `${info.ino}:${info.mtimeMs}:${info.size}`;
    });
    const jobsIn = (): { id: string; state: string }[] => (JSON.parse(readFileSync(files[0]!, 'utf8')) as { jobs: { id: string; state: string }[] }).jobs;

    await cli();
    const first = stamps();
    expect(jobsIn().map((job) => job.state)).toEqual(['done', 'done', 'done', 'done']);

    await runHere();
    expect(stamps(), 'nothing changed: nothing written').toEqual(first);

    // A job added to the manifest: sent, and in every document.
    await writeTtsManifest(dir, { jobs: 5, budget: 5 });
    await runHere();
    const afterAdd = stamps();
    for (const [i, stamp] of afterAdd.entries()) expect(stamp, files[i]).not.toBe(first[i]);
    expect(jobsIn()).toHaveLength(5);
    expect(readFileSync(files[1]!, 'utf8').trim().split('\n')).toHaveLength(6);
    expect(readFileSync(files[2]!, 'utf8')).toContain('line-00004');

    // A tag given to a job changes no count and sends nothing, but the documents show it.
    writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('  - id: line-00002\n', '  - id: line-00002\n    tags: [promo]\n'));
    await runHere();
    expect(stamps()).not.toEqual(afterAdd);
    expect(readFileSync(files[1]!, 'utf8')).toMatch(/^line-00002,.*,promo,,,yes$/m);

    // Another budget changes what the documents say, though no job changed.
    await runHere(7);
    expect((JSON.parse(readFileSync(files[0]!, 'utf8')) as { budget: number }).budget).toBe(7);
    const afterBudget = stamps();
    await runHere(7);
    expect(stamps()).toEqual(afterBudget);

    // A file removed, or edited by hand, is written again whole.
    rmSync(files[1]!);
    writeFileSync(files[0]!, 'edited');
    await runHere(7);
    expect(jobsIn()).toHaveLength(5);
    expect(readFileSync(files[1]!, 'utf8').trim().split('\n')).toHaveLength(6);
    expect(sim.stats.accepted).toHaveLength(5);
  });
});
