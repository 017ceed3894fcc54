import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pngImage } from '../../src/sim/results.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { estimateInProcess, runInProcessResult } from '../helpers/in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { mp3Frames, mp4Movie, webmMovie } from '../support/media-files.js';

const KINDS = ['vid-rmbg', 'video-replace', 'aud2video'];
const FAST = {
  pendingMs: Object.fromEntries(KINDS.map((kind) => [kind, 20])),
  processingMs: Object.fromEntries(KINDS.map((kind) => [kind, 40])),
  latencyMs: 2,
};

const DEFAULTS = [
  'defaults:',
  '  vid-rmbg: { model: RMBG-1.4 }',
  '  video-replace: { model: Wan2_2_Animate_14B_INT8 }',
  '  aud2video: { model: Ltx2_3_22B_Dist_INT8, width: 768, height: 432, frames: 121, fps: 24, seed: 3 }',
];

describe('background removal, character replacement and audio to video against the simulator', () => {
  const workspace = useWorkspace();

  async function manifest(jobs: string[]): Promise<string> {
    const dir = workspace.dir;
    await writeFile(path.join(dir, 'a.mp4'), mp4Movie(5));
    await writeFile(path.join(dir, 'b.mp4'), mp4Movie(9));
    await writeFile(path.join(dir, 'c.webm'), webmMovie(4, 320, 240));
    await writeFile(path.join(dir, 'knight.png'), pngImage(96));
    await writeFile(path.join(dir, 'song.mp3'), mp3Frames(3));
    const file = path.join(dir, 'videos.yaml');
    await writeFile(file, `${['version: 1', ...DEFAULTS, 'jobs:', ...jobs.map((job) => `  - ${job}`)].join('\n')}\n`);
    return file;
  }

  it('prices each by what its files state (one call per distinct price), runs, and saves every video', async () => {
    const file = await manifest([
      '{ id: rmbg-a, type: vid-rmbg, video: a.mp4 }',
      '{ id: rmbg-b, type: vid-rmbg, video: b.mp4 }',
      '{ id: rmbg-c, type: vid-rmbg, video: c.webm }',
      '{ id: swap-a, type: video-replace, video: a.mp4, ref_image: knight.png }',
      '{ id: swap-a2, type: video-replace, video: a.mp4, ref_image: knight.png, prompt: "in armour", seed: 4 }',
      '{ id: swap-b, type: video-replace, video: b.mp4, ref_image: knight.png, width: 320, height: 180 }',
      '{ id: sing, type: aud2video, prompt: "a singer", audio: song.mp3, first_frame_image: knight.png }',
      '{ id: choir, type: aud2video, prompt: "a choir", audio: song.mp3 }',
    ]);
    const sim = await workspace.startSim(FAST);
    const ledgerPath = path.join(workspace.dir, 'videos.mediabatch.db');
    const { report, jobs } = await estimateInProcess({ manifest: file, ledgerPath, baseUrl: sim.url, token: sim.token });
    // Same frame size (a, b) is one background price; one length and size (swap-a, swap-a2) one
    // replacement price; the same numbers (sing, choir) one audio-to-video price.
    expect(report.priceCalls).toBe(5);
    const priceOf = (id: string) => jobs.find((job) => job.id === id)?.priceMicro;
    expect(priceOf('rmbg-a')).toBe(priceOf('rmbg-b'));
    expect(priceOf('rmbg-c')).toBeLessThan(priceOf('rmbg-a') ?? 0);
    expect(priceOf('swap-a')).toBe(priceOf('swap-a2'));
    expect(priceOf('sing')).toBe(priceOf('choir'));

    const outDir = path.join(workspace.dir, 'videos.out');
    const { result } = await runInProcessResult({ manifest: file, ledgerPath, outDir, baseUrl: sim.url, token: sim.token });
    expect(sim.stats.accepted).toHaveLength(8);
    const ids = ['rmbg-a', 'rmbg-b', 'rmbg-c', 'swap-a', 'swap-a2', 'swap-b', 'sing', 'choir'];
    expect(readdirSync(outDir).filter((name) => name.endsWith('.mp4')).sort()).toEqual(ids.map((id) => `${id}.mp4`).sort());
    expect(readFileSync(path.join(outDir, 'swap-b.mp4')).subarray(4, 8).toString('latin1')).toBe('ftyp');
    // The simulator read each video itself at the submit: what it charged is what the facts quoted.
    expect(result.summary.spentMicro).toBe(report.totalMicro);
  });

  it('refuses wrong media, a side without the other and a model of another kind: exit 2, located, nothing sent', async () => {
    const file = await manifest([
      '{ id: still, type: vid-rmbg, video: knight.png }',
      '{ id: half, type: video-replace, video: a.mp4, ref_image: knight.png, width: 640 }',
      '{ id: mute, type: aud2video, prompt: "x", audio: knight.png }',
      '{ id: other, type: aud2video, prompt: "x", audio: song.mp3, model: Ltxv_13B_0_9_8_Distilled_FP8 }',
    ]);
    const sim = await workspace.startSim(FAST);
    // A refusal of what was read: the CLI's main in this process (bad-input.test.ts shows exit 2 through a process).
    const validate = await mainInProcess(['validate', file, '--base-url', sim.url], { MEDIABATCH_TOKEN: sim.token });
    expect(validate.code).toBe(2);
    expect(validate.stderr).toContain(
      [
        `${file}:7:41 job "still" (#1) video: expected a video, got "knight.png" (its bytes are PNG, an image)`,
        `${file}:8:5 job "half" (#2) height: expected a height too, as width is given, got nothing; give both sides, or neither`,
        `${file}:9:54 job "mute" (#3) audio: expected an audio file, got "knight.png" (its bytes are PNG, an image)`,
        `${file}:10:72 job "other" (#4) model: expected a model for aud2video, got "Ltxv_13B_0_9_8_Distilled_FP8" ` +
          '(img2video, txt2video); models for aud2video: Ltx2_3_22B_Dist_INT8',
        `4 problems in ${file}; nothing was sent.`,
      ].join('\n'),
    );
    expect(sim.stats.accepted).toHaveLength(0);
  });
});
