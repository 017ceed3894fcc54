/**
 * What the CLI prints of a pipeline: `estimate` and `run` refuse a graph that cannot run as
 * `validate` does (exit 2, every problem at its field, no price call, nothing sent); the estimate's
 * JSON marks a price at its upper bound and groups the jobs by step; the run's JSON counts the
 * blocked jobs, each with its reason, and its steps.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { microToUsd, sumMicro, usdToMicro } from '../../src/money.js';
import { hasStackTrace } from '../helpers/cli.js';
import { expectDocument } from '../helpers/documents.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { against, fixture } from './pipeline-commands.js';


interface EstimateJson {
  total: number;
  includes_upper_bounds: number;
  jobs: { id: string; type: string; price: number; upper_bound?: boolean; step?: number }[];
  by_step: Record<string, { jobs: number; total: number }>;
}

interface RunJson {
  counts: Record<string, number>;
  steps: Record<string, Record<string, number>>;
  jobs: { id: string; state: string; error: string | null; step: number; inputs: Record<string, string> }[];
}



describe('a pipeline as the CLI reports it', () => {
  const workspace = useWorkspace();

  it('estimate and run refuse a graph that cannot run as validate does: exit 2, the same located problems, nothing sent', async () => {
    const file = await fixture(workspace.dir, 'invalid/pipeline-graph.yaml');
    const sim = await workspace.startSim();
    const validate = await against(sim, ['validate', file]);
    expect(validate.code, validate.stderr).toBe(2);
    // Its whole text is pinned in pipelines-graph.test.ts: four problems, then the count.
    const problems = validate.stderr.slice(validate.stderr.indexOf(`${file}:15:24 job "misspelt" (#2)`));
    expect(problems).toMatch(/^(.+\n){4}4 problems in .+; nothing was sent\.\n$/);
    for (const command of ['estimate', 'run']) {
      const result = await against(sim, [command, file]);
      expect(result.code, `${command}: ${result.stderr}`).toBe(2);
      expect(result.stderr, command).toContain(problems);
      expect(hasStackTrace(result.stderr), result.stderr).toBe(false);
    }
    expect([sim.stats.calls.price, sim.stats.calls.submit]).toEqual([0, 0]);
  });

  it('estimate --json marks the price at the bound, counts such prices and groups the jobs by step', async () => {
    const file = await fixture(workspace.dir, 'valid/pipeline.yaml');
    const sim = await workspace.startSim();
    const result = await against(sim, ['estimate', file, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const estimate = expectDocument<EstimateJson>('estimate', result.stdout);
    const job = (id: string) => estimate.jobs.find((one) => one.id === id);
    expect(estimate.jobs.filter((one) => one.upper_bound === true).map((one) => one.id)).toEqual(['dubbed']);
    expect(estimate.includes_upper_bounds).toBe(1);
    const micro = (ids: string[]) => sumMicro(ids.map((id) => usdToMicro(job(id)?.price ?? Number.NaN, 'up')));
    const first = ['poster', 'narration', 'interview-transcript'];
    const second = ['poster-moving', 'talking-poster', 'dubbed'];
    expect(estimate.by_step).toEqual({
      '1': { jobs: 3, total: microToUsd(micro(first)) },
      '2': { jobs: 3, total: microToUsd(micro(second)) },
    });
    expect(usdToMicro(estimate.total, 'up')).toBe(micro([...first, ...second]));
    expect(Object.fromEntries(estimate.jobs.map((one) => [one.id, one.step]))).toMatchObject({ poster: 1, dubbed: 2 });
  });

  it('run --json of a chain whose first job failed for good: the rest blocked with the reason, counted, by step', async () => {
    const manifest = path.join(workspace.dir, 'chain.yaml');
    const jobs = [
      '  - { id: poster, type: txt2img, prompt: "a lighthouse at dusk" }',
      '  - { id: cutout, type: img-rmbg, image: { from: poster } }',
      '  - { id: cutout-hd, type: img-upscale, image: { from: cutout } }',
    ];
    const defaults = [
      '  txt2img: { model: Flux1schnell, width: 512, height: 512, guidance: 0, steps: 4, seed: 7 }',
      '  img-rmbg: { model: Ben2 }',
      '  img-upscale: { model: RealESRGAN_x4plus }',
    ];
    await writeFile(manifest, ['version: 1', 'defaults:', ...defaults, 'jobs:', ...jobs, ''].join('\n'));
    const sim = await workspace.startSim({ jobErrorRate: 1, errorRetryable: false, pendingMs: { txt2img: 20 }, processingMs: { txt2img: 40 } });
    const result = await against(sim, ['run', manifest, '--json']);
    expect(result.code, result.stderr).toBe(1);
    const run = expectDocument<RunJson>('run', result.stdout);
    expect(run.counts).toMatchObject({ failed: 1, blocked: 2, done: 0 });
    expect(run.steps).toMatchObject({ '1': { failed: 1 }, '2': { blocked: 1 }, '3': { blocked: 1 } });
    const cutout = run.jobs.find((job) => job.id === 'cutout');
    expect(cutout).toMatchObject({ state: 'blocked', step: 2, inputs: { image: 'poster' } });
    expect(cutout?.error).toContain('poster');
    expect(sim.stats.accepted.map((job) => job.type)).toEqual(['txt2img']);

    const status = await mainInProcess(['status', manifest, '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(expectDocument<RunJson>('status', status.stdout).counts).toMatchObject({ blocked: 2 });
  });
});
