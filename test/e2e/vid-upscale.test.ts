import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pngImage } from '../../src/sim/results.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { estimateInProcess, runInProcessResult } from '../helpers/in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { mp4Movie, webmMovie } from '../support/media-files.js';

const FAST = { pendingMs: { 'vid-upscale': 20 }, processingMs: { 'vid-upscale': 40 }, latencyMs: 2 };

describe('a video file in, a video out: vid-upscale against the simulator', () => {
  const workspace = useWorkspace();

  async function manifest(jobs: string[]): Promise<string> {
    const file = path.join(workspace.dir, 'upscale.yaml');
    const lines = ['version: 1', 'defaults:', '  vid-upscale: { model: RealESRGAN_Vid_x4 }', 'jobs:', ...jobs.map((job) => `  - ${job}`)];
    await writeFile(file, `${lines.join('\n')}\n`);
    return file;
  }

  it('prices by the frame size and length read from each file (WebM, MP4), once per distinct video, and saves each result', async () => {
    await writeFile(path.join(workspace.dir, 'a.webm'), webmMovie(5, 640, 360));
    await writeFile(path.join(workspace.dir, 'b.mp4'), mp4Movie(12, 'vide', 320, 240));
    const file = await manifest([
      '{ id: a, type: vid-upscale, video: a.webm }',
      '{ id: a-twice, type: vid-upscale, video: a.webm, scale: 2 }',
      '{ id: a-again, type: vid-upscale, video: a.webm }',
      '{ id: b, type: vid-upscale, video: b.mp4 }',
    ]);
    const sim = await workspace.startSim(FAST);
    const ledgerPath = path.join(workspace.dir, 'upscale.mediabatch.db');
    const { report, jobs } = await estimateInProcess({ manifest: file, ledgerPath, baseUrl: sim.url, token: sim.token });
    // `a` and `a-again` share their video's size and length, so one price.
    expect(report.priceCalls).toBe(3);
    const priceOf = (id: string) => jobs.find((job) => job.id === id)?.priceMicro;
    expect(priceOf('a')).toBe(priceOf('a-again'));
    expect(priceOf('a-twice')).toBeLessThan(priceOf('a') ?? 0);

    const outDir = path.join(workspace.dir, 'upscale.out');
    const { result } = await runInProcessResult({ manifest: file, ledgerPath, outDir, baseUrl: sim.url, token: sim.token });
    expect(sim.stats.accepted.map((job) => job.type)).toEqual(Array(4).fill('vid-upscale'));
    expect(readdirSync(outDir).sort()).toEqual(['a-again.mp4', 'a-twice.mp4', 'a.mp4', 'b.mp4']);
    expect(readFileSync(path.join(outDir, 'a.mp4')).subarray(4, 8).toString('latin1')).toBe('ftyp');
    expect(result.summary.spentMicro).toBe(report.totalMicro);
  });

  it('refuses an image given as the video, and a missing file: exit 2, located, nothing sent', async () => {
    await writeFile(path.join(workspace.dir, 'still.png'), pngImage());
    const file = await manifest(['{ id: still, type: vid-upscale, video: still.png }', '{ id: gone, type: vid-upscale, video: gone.mp4 }']);
    const sim = await workspace.startSim(FAST);
    // A refusal of what was read: the CLI's main in this process (bad-input.test.ts shows exit 2 through a process).
    const validate = await mainInProcess(['validate', file, '--base-url', sim.url], { MEDIABATCH_TOKEN: sim.token });
    expect(validate.code).toBe(2);
    expect(validate.stderr).toContain(
      [
        `${file}:5:44 job "still" (#1) video: expected a video, got "still.png" (its bytes are PNG, an image)`,
        `${file}:6:43 job "gone" (#2) video: expected an existing file, got "gone.mp4" (no such file); paths are relative to the manifest's folder`,
        `2 problems in ${file}; nothing was sent.`,
      ].join('\n'),
    );
    expect(sim.stats.accepted).toHaveLength(0);
  });
});
