/**
 * A two-step pipeline at scale (issue 26): a CSV source of prompts read twice, once as images
 * (`img-{n}`) and once as videos each animating its own image (`first_frame_image: { from:
 * "img-{n}" }`), BENCH_PIPELINE_JOBS jobs in all (100,000 unless said otherwise). `estimate`, then
 * a whole `run` (every image followed, downloaded and checked before its video is sent) through
 * the built CLI against the simulator in this process, its peak RSS beside the 256 MB goal.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startSimulator } from '../src/sim/index.js';
import { writeLines } from './jobs.js';
import { fmt, measureCli, type Measured } from './measure.js';

const GOAL_RSS_MB = 256;

export interface PipelineFigures {
  jobs: number;
  estimate: Measured;
  run: Measured & { accepted: number; duplicates: number; jobsPerSecond: number };
}

const DEFAULTS = [
  '  txt2img: { model: Flux1schnell, width: 512, height: 512, guidance: 0, steps: 4, seed: 7 }',
  '  img2video: { model: Ltxv_13B_0_9_8_Distilled_FP8, width: 768, height: 432, steps: 1, frames: 120, fps: 30,' +
    ' guidance: 0, seed: 42 }',
];

/** `rows` prompts, all different, and the manifest that makes an image and then a video of each. */
async function writePipeline(dir: string, rows: number): Promise<string> {
  await writeLines(path.join(dir, 'prompts.csv'), 'prompt\n', { from: 1, to: rows }, (i) => `lighthouse number ${i} at dusk\n`);
  const manifest = path.join(dir, 'pipeline.yaml');
  const sources = [
    'sources:',
    '  - csv: prompts.csv',
    '    type: txt2img',
    '    id: "img-{n}"',
    '  - csv: prompts.csv',
    '    type: img2video',
    '    id: "vid-{n}"',
    '    first_frame_image: { from: "img-{n}" }',
  ];
  await writeFile(manifest, ['version: 1', 'defaults:', ...DEFAULTS, ...sources, ''].join('\n'));
  return manifest;
}

export async function pipelineBench(dir: string, jobs: number): Promise<PipelineFigures> {
  await mkdir(dir, { recursive: true });
  const manifest = await writePipeline(dir, Math.floor(jobs / 2));
  const instant = { txt2img: 0, img2video: 0 };
  // The balance of a real account that can pay for the whole batch: the run checks it first.
  const sim = await startSimulator({
    plan: 'unlimited', pendingMs: instant, processingMs: instant, balanceUsd: 1e7,
  });
  const env = { ...process.env, MEDIABATCH_TOKEN: sim.token, NO_COLOR: '1' };
  const service = ['--base-url', sim.url, '--plan', 'unlimited'];
  try {
    const estimate = await measureCli(['estimate', manifest, ...service], env);
    const run = await measureCli(['run', manifest, ...service, '--concurrency', '8', '--poll-ms', '50'], env);
    const accepted = sim.stats.accepted.length;
    const jobsPerSecond = accepted / (run.wallMs / 1000);
    return { jobs, estimate, run: { ...run, accepted, duplicates: sim.stats.duplicates().length, jobsPerSecond } };
  } finally {
    await sim.close();
  }
}

/** Rows for the printed table, each figure beside its goal. */
export function formatPipelineFigures(f: PipelineFigures): [string, string][] {
  const label = `pipeline, ${f.jobs.toLocaleString('en-US')} jobs in 2 steps (CSV)`;
  const ok = f.run.peakRssMb <= GOAL_RSS_MB ? 'ok' : 'MISSED';
  const failed = [f.estimate, f.run].filter((m) => m.code !== 0);
  const warnings = failed.map((m): [string, string] => ['  warning', m.stderrTail]);
  const estimate = `${fmt(f.estimate.wallMs)} ms, peak RSS ${fmt(f.estimate.peakRssMb)} MB, exit ${f.estimate.code}`;
  const run =
    `${fmt(f.run.wallMs)} ms, ${f.run.accepted} sent (${fmt(f.run.jobsPerSecond)} jobs/s), ` +
    `${f.run.duplicates} twice, peak RSS ${fmt(f.run.peakRssMb)} MB (goal ≤ ${GOAL_RSS_MB}: ${ok}), ` +
    `exit ${f.run.code}`;
  return [[`${label}: estimate`, estimate], [`${label}: run`, run], ...warnings];
}
