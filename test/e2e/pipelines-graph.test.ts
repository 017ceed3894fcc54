/**
 * Pipelines before anything is sent: a graph with a missing id, a result of the wrong kind, a
 * cycle or a job taking its own result is refused by validate, offline or not (exit 2, every
 * problem located at the field that refers, no price call); a whole graph is priced before the
 * first cent, a dependent whose price hangs on its input's length at the catalogue's upper bound,
 * and the budget judges that bound.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decimalUsd, sumMicro, usdToMicro } from '../../src/money.js';
import type { Simulator } from '../../src/sim/index.js';
import { openSqliteLedger } from '../../src/store/index.js';
import { hasStackTrace, runCli } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { estimateInProcess } from '../helpers/in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { against, fixture } from './pipeline-commands.js';





describe('a pipeline graph checked before anything is sent', () => {
  const workspace = useWorkspace();

  /** The problems of pipeline-graph.yaml, each at the field that refers (`from` a job), all at once. */
  function expectGraphProblems(stderr: string, file: string): void {
    expect(stderr).toContain(
      [
        `${file}:15:24 job "misspelt" (#2) first_frame_image: expected the id of a job of this manifest, got "postre" ` +
          '(no job has this id); give the id of the job whose result it takes',
        `${file}:22:24 job "sound-as-image" (#4) first_frame_image: expected the id of a job that makes an image, ` +
          'got "narration" (txt2audio, which makes audio); refer to a job that makes an image, or give first_frame_image a value of its own',
        // A cycle is named whole, once; a job taking its own result is one too.
        `${file}:28:12 job "read" (#6) image: expected references that do not lead back to this job, got a cycle: ` +
          'read → drawn → read; one of these jobs must take this field from a file or a text of its own',
        `${file}:31:12 job "loop" (#7) image: expected references that do not lead back to this job, got a cycle: ` +
          'loop → loop; one of these jobs must take this field from a file or a text of its own',
        `4 problems in ${file}; nothing was sent.`,
      ].join('\n'),
    );
    expect(hasStackTrace(stderr), stderr).toBe(false);
  }

  it('validate --offline names every problem of the graph at its field: exit 2', async () => {
    const file = await fixture(workspace.dir, 'invalid/pipeline-graph.yaml');
    const result = await runCli(['validate', file, '--offline']);
    expect(result.code, result.stderr).toBe(2);
    expectGraphProblems(result.stderr, file);
  });

  it('validate against the service refuses the same graph: exit 2, no price call, nothing sent', async () => {
    const file = await fixture(workspace.dir, 'invalid/pipeline-graph.yaml');
    const sim = await workspace.startSim();
    const result = await against(sim, ['validate', file]);
    expect(result.code, result.stderr).toBe(2);
    expectGraphProblems(result.stderr, file);
    expect([sim.stats.calls.price, sim.stats.calls.submit]).toEqual([0, 0]);
  });

  it('the product\'s example validates, against the service too', async () => {
    const file = await fixture(workspace.dir, 'valid/pipeline.yaml');
    const offline = await mainInProcess(['validate', file, '--offline']);
    expect(offline.code, offline.stderr).toBe(0);
    const sim = await workspace.startSim();
    const online = await against(sim, ['validate', file]);
    expect(online.code, online.stderr).toBe(0);
    expect([sim.stats.calls.price, sim.stats.calls.submit]).toEqual([0, 0]);
  });
});

describe('a pipeline priced whole before the first cent', () => {
  const workspace = useWorkspace();

  /** What the service asks for one Chatterbox speech job of `chars` characters, as an estimate prices it. */
  async function speechPriceMicro(sim: Simulator, chars: number): Promise<number> {
    const manifest = path.join(workspace.dir, 'longest.yaml');
    const job = '{ id: longest, type: txt2audio, model: Chatterbox, voice: default, lang: en, speed: 1, format: mp3, sample_rate: 24000';
    await writeFile(manifest, ['version: 1', 'jobs:', `  - ${job}, text: "${'a'.repeat(chars)}" }`, ''].join('\n'));
    const ledgerPath = path.join(workspace.dir, 'longest.mediabatch.db');
    const { report } = await estimateInProcess({ manifest, ledgerPath, baseUrl: sim.url, token: sim.token });
    return report.totalMicro;
  }

  it('prices the transcript\'s speech at the model\'s max_text and the videos exactly, before anything exists', async () => {
    const manifest = await fixture(workspace.dir, 'valid/pipeline.yaml');
    const sim = await workspace.startSim();
    const ledgerPath = path.join(workspace.dir, 'pipeline.mediabatch.db');
    const { report, jobs } = await estimateInProcess({ manifest, ledgerPath, baseUrl: sim.url, token: sim.token });
    expect(sim.stats.calls.submit).toBe(0);
    expect(report.jobs).toBe(6);
    expect(report.totalMicro).toBe(sumMicro(jobs.map((job) => job.priceMicro)));
    // Chatterbox's max_text in the catalogue is 3,000 characters: the most a transcript can make it cost.
    const priceOf = (id: string): number | undefined => jobs.find((job) => job.id === id)?.priceMicro;
    expect(priceOf('dubbed')).toBe(await speechPriceMicro(sim, 3000));

    const ledger = await openSqliteLedger(ledgerPath, { mode: 'read-only' });
    try {
      const rows = await ledger.readJobs({ scope: 'all', limit: 100 });
      // Only the speech hangs on its input's bytes; a video is priced by its numbers alone.
      expect(rows.filter((row) => row.priceBound).map((row) => row.id)).toEqual(['dubbed']);
      expect(Object.fromEntries(rows.map((row) => [row.id, row.inputs]))).toEqual({
        poster: null,
        'poster-moving': { first_frame_image: 'poster' },
        narration: null,
        'talking-poster': { audio: 'narration', first_frame_image: 'poster' },
        'interview-transcript': null,
        dubbed: { text: 'interview-transcript' },
      });
      expect(rows.filter((row) => row.inputs !== null).map((row) => row.step)).toEqual([2, 2, 2]);
    } finally {
      await ledger.close();
    }
  });

  it('judges the budget against the bound: a micro-dollar short of it, run refuses before the first submit (exit 3)', async () => {
    const file = await fixture(workspace.dir, 'valid/pipeline.yaml');
    const sim = await workspace.startSim();
    const { total } = JSON.parse((await against(sim, ['estimate', file, '--json'])).stdout) as { total: number };
    const short = decimalUsd(usdToMicro(total, 'up') - 1);
    const result = await against(sim, ['run', file, '--budget', short]);
    expect(result.code, result.stderr).toBe(3);
    expect(hasStackTrace(result.stderr), result.stderr).toBe(false);
    expect(sim.stats.calls.submit).toBe(0);
  });
});
