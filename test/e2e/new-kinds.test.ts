import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/index.js';
import { hasStackTrace } from '../helpers/cli.js';
import { useWorkspace } from '../helpers/workspace.js';
import { cliAgainst, collect, delay, ledgerRows, mainAgainst, startAgainst } from '../reliability/helpers.js';
import { mainInProcess } from '../helpers/main-in-process.js';

const TIMINGS = {
  pendingMs: { txt2img: 20, txt2video: 30 },
  processingMs: { txt2img: 60, txt2video: 80 },
};

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A marketing batch: product shots in three variants each, and two clips. */
async function writeManifest(dir: string, shots = 12): Promise<string> {
  const lines = [
    'version: 1',
    'defaults:',
    '  txt2img: { model: Flux1schnell, width: 512, height: 512, steps: 4, guidance: 0, seed: 1 }',
    '  txt2video: { model: Ltxv_13B_0_9_8_Distilled_FP8, width: 768, height: 432, steps: 1, frames: 60, fps: 30, guidance: 0, seed: 42 }',
    'jobs:',
  ];
  for (let i = 0; i < shots; i += 1) lines.push(`  - { id: shot-${i}, type: txt2img, prompt: "product ${Math.floor(i / 3)} in variant ${i % 3}", seed: ${i} }`);
  lines.push('  - { id: klein-watercolor, type: txt2img, model: Flux_2_Klein_4B_BF16, prompt: "a kite", guidance: 3.5, loras: [{ name: watercolor, weight: 0.8 }] }');
  lines.push('  - { id: clip-dawn, type: txt2video, prompt: "dawn over the harbour" }');
  lines.push('  - { id: clip-dusk, type: txt2video, prompt: "dusk over the harbour", frames: 120 }');
  const file = path.join(dir, 'campaign.yaml');
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

describe('text to image and text to video, end to end against the simulator', () => {
  const workspace = useWorkspace();
  let sim: Simulator;
  let dir: string;

  beforeEach(async () => {
    dir = workspace.dir;
    sim = await workspace.startSim({ ...TIMINGS, latencyMs: 5 });
  });

  // The CLI's main in this process: its documents and exit codes without a start-up each (the kill
  // below is the process's own).
  const estimate = (manifest: string) => mainInProcess(['estimate', manifest, '--json', '--base-url', sim.url, '--plan', 'unlimited'], { MEDIABATCH_TOKEN: sim.token });

  it('estimates with one price call per size and model, runs, and saves PNGs and MP4s', async () => {
    const manifest = await writeManifest(dir);
    const first = await estimate(manifest);
    expect(first.code, first.stderr).toBe(0);
    const report = JSON.parse(first.stdout) as { total: number; priceCalls: number; jobs: { id: string; type: string; price: number }[] };
    // The 12 shots differ only in prompt and seed: one price group. Klein is another, each clip length one more.
    expect(report.priceCalls).toBe(4);
    expect(report.jobs.filter((j) => j.type === 'txt2video')).toHaveLength(2);
    expect(new Set(report.jobs.filter((j) => j.id.startsWith('shot-')).map((j) => j.price)).size).toBe(1);

    const run = await mainAgainst(sim, ['run', manifest, '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(hasStackTrace(run.stderr)).toBe(false);
    const files = readdirSync(path.join(dir, 'campaign.out')).sort();
    expect(files.filter((f) => f.endsWith('.png'))).toHaveLength(13);
    expect(files.filter((f) => !f.endsWith('.png'))).toEqual(['clip-dawn.mp4', 'clip-dusk.mp4']);
    expect(readFileSync(path.join(dir, 'campaign.out', 'shot-0.png')).subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect(sim.stats.accepted).toHaveLength(15);
    const status = JSON.parse((await mainInProcess(['status', manifest, '--json'])).stdout) as { spent: number };
    expect(status.spent).toBeCloseTo(report.total, 6);
  });

  it('a run killed mid-way resumes: nothing sent twice, every result on disk', async () => {
    const manifest = await writeManifest(dir, 30);
    const run = startAgainst(sim, ['run', manifest, '--concurrency', '2']);
    const ended = collect(run);
    const until = Date.now() + 10_000;
    while (sim.stats.accepted.length < 6 && Date.now() < until) await delay(5);
    run.kill('SIGKILL');
    await ended;
    const afterKill = sim.stats.accepted.length;
    expect(afterKill).toBeGreaterThan(0);

    const resumed = await cliAgainst(sim, ['run', manifest]);
    const rows = await ledgerRows(path.join(dir, 'campaign.mediabatch.db'));
    expect(rows).toHaveLength(33);
    // What the kill caught mid-submit (at most the two in flight) is in doubt and left alone; the rest is done.
    const inDoubt = rows.filter((r) => r.state === 'in_doubt').length;
    expect(inDoubt).toBeLessThanOrEqual(2);
    expect(rows.filter((r) => r.state === 'done')).toHaveLength(33 - inDoubt);
    expect(resumed.code, resumed.stderr).toBe(inDoubt === 0 ? 0 : 1);
    expect(sim.stats.duplicates()).toEqual([]);
    expect(readdirSync(path.join(dir, 'campaign.out')).filter((f) => f.endsWith('.png'))).toHaveLength(31 - inDoubt);
  });

  it('checks the new kinds against the catalogue: resolution step, steps, LoRAs, frames', async () => {
    const file = path.join(dir, 'bad.yaml');
    await writeFile(
      file,
      [
        'version: 1',
        'jobs:',
        '  - { id: odd-size, type: txt2img, model: Flux1schnell, prompt: p, width: 500, height: 512, steps: 9, guidance: 0, seed: 1 }',
        '  - { id: no-loras, type: txt2img, model: Flux1schnell, prompt: p, width: 512, height: 512, steps: 4, guidance: 0, seed: 1, loras: [{ name: watercolor, weight: 1 }] }',
        '  - { id: long-clip, type: txt2video, model: Ltxv_13B_0_9_8_Distilled_FP8, prompt: p, width: 768, height: 432, steps: 1, frames: 240, fps: 30, guidance: 0, seed: 1 }',
        '',
      ].join('\n'),
    );
    const result = await mainInProcess(['validate', file, '--base-url', sim.url], { MEDIABATCH_TOKEN: sim.token });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('job "odd-size" (#1) steps: expected a whole number between 1 and 8 for Flux1schnell, got 9');
    expect(result.stderr).toContain('job "odd-size" (#1) width: expected a multiple of 16 for Flux1schnell, got 500; try 496');
    expect(result.stderr).toContain('job "no-loras" (#2) loras: expected no LoRAs for Flux1schnell (it offers none), got ["watercolor"]; remove them, or use a model that offers LoRAs: Flux_2_Klein_4B_BF16');
    expect(result.stderr).toContain('job "long-clip" (#3) frames: expected a whole number between 30 and 120 for Ltxv_13B_0_9_8_Distilled_FP8, got 240');
    expect(sim.stats.calls.submit + sim.stats.calls.price).toBe(0);
  });
});
