import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pngImage } from '../../src/sim/results.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { estimateInProcess, runInProcessResult } from '../helpers/in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { mp3Frames } from '../support/media-files.js';

const FAST = { pendingMs: { img2img: 20 }, processingMs: { img2img: 40 }, latencyMs: 2 };
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe('an image or several in, an image out: img2img against the simulator', () => {
  const workspace = useWorkspace();

  async function manifest(jobs: string[]): Promise<string> {
    const file = path.join(workspace.dir, 'edits.yaml');
    const lines = ['version: 1', 'defaults:', '  img2img: { model: QwenImageEdit_Plus_NF4, steps: 40, seed: 1 }', 'jobs:', ...jobs.map((job) => `  - ${job}`)];
    await writeFile(file, `${lines.join('\n')}\n`);
    return file;
  }

  it('prices without the images, once for jobs that differ only in prompt, images and seed; sends image or images[]', async () => {
    await writeFile(path.join(workspace.dir, 'a.png'), pngImage());
    await writeFile(path.join(workspace.dir, 'b.png'), pngImage());
    const file = await manifest([
      '{ id: dusk, type: img2img, prompt: "make it dusk", image: a.png }',
      '{ id: pair, type: img2img, prompt: "put the cat from the second on the first", images: [a.png, b.png], seed: 9 }',
      '{ id: snow, type: img2img, prompt: "add snow", image: b.png, negative_prompt: blur, width: 512, height: 512 }',
      '{ id: quick, type: img2img, prompt: "sharpen", image: a.png, steps: 20 }',
    ]);
    const sim = await workspace.startSim(FAST);
    const ledgerPath = path.join(workspace.dir, 'edits.mediabatch.db');
    const { report, jobs } = await estimateInProcess({ manifest: file, ledgerPath, baseUrl: sim.url, token: sim.token });
    expect(report.priceCalls).toBe(2);
    const priceOf = (id: string) => jobs.find((job) => job.id === id)?.priceMicro ?? 0;
    expect(new Set(['dusk', 'pair', 'snow'].map(priceOf)).size).toBe(1);
    expect(priceOf('quick')).toBe(priceOf('dusk') / 2);

    const outDir = path.join(workspace.dir, 'edits.out');
    const { result } = await runInProcessResult({ manifest: file, ledgerPath, outDir, baseUrl: sim.url, token: sim.token });
    expect(sim.stats.accepted.map((job) => job.type)).toEqual(Array(4).fill('img2img'));
    expect(readdirSync(outDir).sort()).toEqual(['dusk.png', 'pair.png', 'quick.png', 'snow.png']);
    expect(readFileSync(path.join(outDir, 'pair.png')).subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect(result.summary.spentMicro).toBe(report.totalMicro);
  });

  it('refuses both image and images, audio as an image, and more images than the model takes: exit 2, nothing sent', async () => {
    await writeFile(path.join(workspace.dir, 'a.png'), pngImage());
    await writeFile(path.join(workspace.dir, 'song.mp3'), mp3Frames(2));
    const file = await manifest([
      '{ id: both, type: img2img, prompt: "x", image: a.png, images: [a.png] }',
      '{ id: sound, type: img2img, prompt: "x", image: song.mp3 }',
      '{ id: crowd, type: img2img, prompt: "x", images: [a.png, a.png, a.png, a.png] }',
    ]);
    const sim = await workspace.startSim(FAST);
    // A refusal of what was read: the CLI's main in this process (bad-input.test.ts shows exit 2 through a process).
    const validate = await mainInProcess(['validate', file, '--base-url', sim.url], { MEDIABATCH_TOKEN: sim.token });
    expect(validate.code).toBe(2);
    expect(validate.stderr).toContain(
      [
        `${file}:5:67 job "both" (#1) images: expected image or images, got both`,
        `${file}:6:53 job "sound" (#2) image: expected a JPG, PNG, GIF, BMP or WebP image, got "song.mp3" (its bytes are MPEG audio, an audio file)`,
        `${file}:7:54 job "crowd" (#3) images: expected at most 3 images for QwenImageEdit_Plus_NF4, got 4 images`,
        `3 problems in ${file}; nothing was sent.`,
      ].join('\n'),
    );
    expect(sim.stats.accepted).toHaveLength(0);
  });
});
