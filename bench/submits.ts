/**
 * The runner's overhead goal on its own: `run --no-wait` of BENCH_JOBS speech jobs (2,000 unless
 * said otherwise) against a bare undici loop sending the same submits (`npm run bench:submits`;
 * `npm run bench` takes the same figure at its own size). The goal: the submit phase within 4×.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSimulator, type Simulator } from '../src/sim/index.js';
import { bareUndiciSubmits } from './bare-undici.js';
import { benchText, VOICES } from './jobs.js';
import { fmt, measureCli } from './measure.js';

export const CONCURRENCY = 8;

export async function writeManifest(dir: string, jobs: number): Promise<string> {
  const lines = [
    'version: 1',
    'defaults:',
    '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }',
    'jobs:',
  ];
  for (let i = 0; i < jobs; i += 1) {
    // Three parameter groups (voices) and all-different texts, as in issue 4.
    lines.push(`  - id: j${i}`, '    type: txt2audio', `    voice: ${VOICES[i % VOICES.length]}`, `    text: "${benchText(i)}"`);
  }
  const file = path.join(dir, 'bench.yaml');
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

export function cliEnv(sim: Simulator): NodeJS.ProcessEnv {
  return { ...process.env, MEDIABATCH_TOKEN: sim.token, NO_COLOR: '1' };
}

/** The submit phase alone, as the service saw it: first to last accepted submit. */
export function submitPhaseMs(sim: Simulator): number {
  const acceptedAt = sim.stats.accepted.map((a) => a.at);
  return Math.max(...acceptedAt) - Math.min(...acceptedAt);
}

async function main(): Promise<void> {
  const jobs = Number(process.env['BENCH_JOBS'] ?? 2_000);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mediabatch-submits-'));
  try {
    const manifest = await writeManifest(dir, jobs);
    const sim = await startSimulator({ plan: 'unlimited', pendingMs: { txt2audio: 0, img2video: 0 }, processingMs: { txt2audio: 0, img2video: 0 } });
    let run: Awaited<ReturnType<typeof measureCli>>;
    let phaseMs: number;
    try {
      run = await measureCli(['run', manifest, '--base-url', sim.url, '--plan', 'unlimited', '--concurrency', String(CONCURRENCY), '--no-wait'], cliEnv(sim));
      if (sim.stats.accepted.length !== jobs) throw new Error(`only ${sim.stats.accepted.length} of ${jobs} accepted: ${run.stderrTail}`);
      phaseMs = submitPhaseMs(sim);
    } finally {
      await sim.close();
    }
    const { inProcess, childProcess } = await bareUndiciSubmits(jobs, CONCURRENCY);
    const bareMs = Math.min(inProcess.wallMs, childProcess.wallMs);
    process.stdout.write(
      `${jobs} submits: run --no-wait ${fmt(run.wallMs)} ms (peak RSS ${fmt(run.peakRssMb)} MB), submit phase ${fmt(phaseMs)} ms; bare undici ${fmt(bareMs)} ms\n` +
        `runner / bare: submit phase ${(phaseMs / bareMs).toFixed(2)}× (goal ≤ 4×), whole command ${(run.wallMs / bareMs).toFixed(2)}×\n`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
