import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pngImage } from '../../src/sim/results.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { estimateInProcess, runInProcessResult } from '../helpers/in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { mp3Frames } from '../support/media-files.js';

const FAST = { pendingMs: { txt2music: 20 }, processingMs: { txt2music: 40 }, latencyMs: 2 };
const DEFAULTS = '{ model: AceStep_1_5_Turbo, lyrics: "[Instrumental]", duration: 30, inference_steps: 8, guidance_scale: 1, seed: -1, format: mp3 }';

describe('music from a caption: txt2music against the simulator', () => {
  const workspace = useWorkspace();

  async function manifest(jobs: string[]): Promise<string> {
    const file = path.join(workspace.dir, 'music.yaml');
    const lines = ['version: 1', 'defaults:', `  txt2music: ${DEFAULTS}`, 'jobs:', ...jobs.map((job) => `  - ${job}`)];
    await writeFile(file, `${lines.join('\n')}\n`);
    return file;
  }

  it('prices once per model, length and steps (never by the words), runs, and saves audio', async () => {
    await writeFile(path.join(workspace.dir, 'style.mp3'), mp3Frames(5));
    const file = await manifest([
      '{ id: calm, type: txt2music, caption: "calm piano" }',
      '{ id: brisk, type: txt2music, caption: "brisk drums", bpm: 140, timesignature: 3, keyscale: "F# minor" }',
      '{ id: long, type: txt2music, caption: "long ambient bed", duration: 60, reference_audio: style.mp3 }',
      '{ id: sung, type: txt2music, caption: "folk song", lyrics: "la la la", vocal_language: en, format: flac }',
    ]);
    const sim = await workspace.startSim(FAST);
    const ledgerPath = path.join(workspace.dir, 'music.mediabatch.db');
    const { report, jobs } = await estimateInProcess({ manifest: file, ledgerPath, baseUrl: sim.url, token: sim.token });
    expect(report.priceCalls).toBe(2);
    const priceOf = (id: string) => jobs.find((job) => job.id === id)?.priceMicro ?? 0;
    expect(new Set(['calm', 'brisk', 'sung'].map(priceOf)).size).toBe(1);
    expect(priceOf('long')).toBe(2 * priceOf('calm'));

    const outDir = path.join(workspace.dir, 'music.out');
    const { result } = await runInProcessResult({ manifest: file, ledgerPath, outDir, baseUrl: sim.url, token: sim.token });
    expect(sim.stats.accepted.map((job) => job.type)).toEqual(Array(4).fill('txt2music'));
    // The simulator makes WAV whatever the format: a result is named by its bytes.
    expect(readdirSync(outDir).sort()).toEqual(['brisk.wav', 'calm.wav', 'long.wav', 'sung.wav']);
    expect(readFileSync(path.join(outDir, 'long.wav')).subarray(8, 12).toString('latin1')).toBe('WAVE');
    expect(result.summary.spentMicro).toBe(report.totalMicro);
  });

  it('refuses an image as the reference, a time signature the service lacks and a length the model cannot make: exit 2, nothing sent', async () => {
    await writeFile(path.join(workspace.dir, 'cover.png'), pngImage());
    const file = await manifest([
      '{ id: pic, type: txt2music, caption: "x", reference_audio: cover.png }',
      '{ id: waltz, type: txt2music, caption: "x", timesignature: 5 }',
      '{ id: epic, type: txt2music, caption: "x", duration: 400 }',
    ]);
    const sim = await workspace.startSim(FAST);
    // A refusal of what was read: the CLI's main in this process (bad-input.test.ts shows exit 2 through a process).
    const validate = await mainInProcess(['validate', file, '--base-url', sim.url], { MEDIABATCH_TOKEN: sim.token });
    expect(validate.code).toBe(2);
    expect(validate.stderr).toContain(
      [
        `${file}:5:64 job "pic" (#1) reference_audio: expected an audio file, got "cover.png" (its bytes are PNG, an image)`,
        `${file}:6:64 job "waltz" (#2) timesignature: expected one of 2, 3, 4, 6, got 5`,
        `${file}:7:58 job "epic" (#3) duration: expected a number between 10 and 300 for AceStep_1_5_Turbo, got 400`,
        `3 problems in ${file}; nothing was sent.`,
      ].join('\n'),
    );
    expect(sim.stats.accepted).toHaveLength(0);
  });
});
