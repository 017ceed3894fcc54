import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Pace } from '../src/runner/pace.js';
import { startSimulator } from '../src/sim/index.js';
import { noWaitRun } from './no-wait-run.js';

const PER_WINDOW = 30;
const WINDOW_MS = 2000;
const JOBS = Number(process.env['BENCH_PACED_JOBS'] ?? 300);

export interface PacedFigures {
  jobs: number;
  allowedPerSecond: number;
  achievedPerSecond: number;
  achievedFraction: number;
  rateLimited: number;
  requests: number;
}

/**
 * A run against a scaled-down rate limit (30 submits per 2 s window instead of 300 per minute):
 * the runner paced as the plan says, the simulator enforcing the same limit with real headers.
 * The achieved rate is measured over the span of accepted submits.
 */
export async function pacedRun(dir: string): Promise<PacedFigures> {
  const sim = await startSimulator({ rateLimits: { 'submit:txt2audio': { perWindow: PER_WINDOW } }, rateWindowMs: WINDOW_MS });
  const file = path.join(dir, 'paced.yaml');
  const jobs = Array.from({ length: JOBS }, (_, i) => `  - { id: p${i}, type: txt2audio, text: "paced job ${i}" }`);
  await writeFile(
    file,
    ['version: 1', 'defaults:', '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }', 'jobs:', ...jobs, ''].join('\n'),
  );
  try {
    // The plan's pace with its window scaled down: the same bucket, seconds instead of minutes.
    await noWaitRun(dir, file, sim, new Pace({ 'submit:txt2audio': { perWindow: PER_WINDOW, windowMs: WINDOW_MS } }));
    const times = sim.stats.accepted.map((a) => a.at).sort((a, b) => a - b);
    const spanS = ((times.at(-1) ?? 0) - (times[0] ?? 0)) / 1000;
    const allowedPerSecond = PER_WINDOW / (WINDOW_MS / 1000);
    const achievedPerSecond = (times.length - 1) / spanS;
    const rateLimited = sim.stats.rateLimited['submit:txt2audio'] ?? 0;
    return {
      jobs: times.length,
      allowedPerSecond,
      achievedPerSecond,
      achievedFraction: achievedPerSecond / allowedPerSecond,
      rateLimited,
      requests: times.length + rateLimited,
    };
  } finally {
    await sim.close();
  }
}
