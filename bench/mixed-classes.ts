import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { PlanName } from '../src/jobs/kind.js';
import { planLimits } from '../src/jobs/plans.js';
import { Pace, planPace } from '../src/runner/pace.js';
import { startSimulator } from '../src/sim/index.js';
import { noWaitRun } from './no-wait-run.js';

/** A span over its floor this close to 1 is the goal: classes paced side by side, none waiting for another. */
export const MIXED_GOAL_RATIO = 1.1;

const KINDS = ['txt2audio', 'txt2img', 'txt2video'] as const;

export interface MixedFigures {
  plan: PlanName;
  /** The plan's minute, as the simulator and the runner both count it here. */
  windowMs: number;
  jobsPerClass: number;
  /** First to last accepted submit, in ms. */
  spanMs: number;
  /** The slowest class's own span at its plan rate: (jobs − 1) × its spacing. */
  floorMs: number;
  ratio: number;
  rateLimited: number;
}

function manifestText(jobsPerClass: number): string {
  const jobs = Array.from({ length: jobsPerClass }, (_, i) => [
    `  - { id: s${i}, type: txt2audio, text: "mixed line ${i}" }`,
    `  - { id: i${i}, type: txt2img, prompt: "mixed picture ${i}" }`,
    `  - { id: v${i}, type: txt2video, prompt: "mixed clip ${i}" }`,
  ]);
  // Listed class by class, as a manifest built from three sources would be: the worst order for a single line.
  const byClass = KINDS.flatMap((_, k) => jobs.map((three) => three[k] as string));
  return [
    'version: 1',
    'defaults:',
    '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }',
    '  txt2img: { model: Flux1schnell, width: 512, height: 512, steps: 4, guidance: 0, seed: 1 }',
    '  txt2video: { model: Ltxv_13B_0_9_8_Distilled_FP8, width: 768, height: 432, steps: 1, frames: 120, fps: 30, guidance: 0, seed: 42 }',
    'jobs:',
    ...byClass,
    '',
  ].join('\n');
}

/**
 * `run --plan P --no-wait` of speech, image and text-to-video jobs against the simulator enforcing
 * the same plan (its minute scaled to `windowMs`): how close the span of accepted submits comes to
 * the slowest class alone.
 */
export async function mixedClassesRun(dir: string, plan: PlanName, jobsPerClass: number, windowMs: number): Promise<MixedFigures> {
  const work = path.join(dir, `mixed-${plan}`);
  await mkdir(work, { recursive: true });
  const file = path.join(work, 'mixed.yaml');
  await writeFile(file, manifestText(jobsPerClass));
  const sim = await startSimulator({ plan, rateWindowMs: windowMs, pendingMs: {}, processingMs: {} });
  const limits = planLimits(plan);
  try {
    await noWaitRun(work, file, sim, new Pace(planPace(limits, windowMs)));
    const times = sim.stats.accepted.map((a) => a.at).sort((a, b) => a - b);
    const floorMs = Math.max(...KINDS.map((kind) => ((jobsPerClass - 1) * windowMs) / limits[`submit:${kind}`].perMinute));
    const spanMs = (times.at(-1) ?? 0) - (times[0] ?? 0);
    const rateLimited = Object.values(sim.stats.rateLimited).reduce((sum, n) => sum + (n ?? 0), 0);
    if (times.length !== jobsPerClass * KINDS.length) throw new Error(`mixed ${plan}: ${times.length} of ${jobsPerClass * KINDS.length} submits accepted`);
    return { plan, windowMs, jobsPerClass, spanMs, floorMs, ratio: spanMs / floorMs, rateLimited };
  } finally {
    await sim.close();
  }
}

export function formatMixedFigures(figures: MixedFigures): [string, string] {
  const { plan, jobsPerClass, windowMs } = figures;
  return [
    `mixed classes, ${plan} (${jobsPerClass} each of 3 kinds, minute = ${windowMs / 1000} s)`,
    `span ${(figures.spanMs / 1000).toFixed(1)} s / floor ${(figures.floorMs / 1000).toFixed(1)} s = ${figures.ratio.toFixed(2)}× (goal ≤ ${MIXED_GOAL_RATIO.toFixed(2)}×), ${figures.rateLimited} × 429 (goal 0)`,
  ];
}
