import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mainInProcess } from '../helpers/main-in-process.js';
import { estimateInProcess, runInProcessResult } from '../helpers/in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { wavTone } from '../../src/sim/results.js';
import { mp3Frames } from '../support/media-files.js';

const FAST = { pendingMs: { txt2audio: 20 }, processingMs: { txt2audio: 40 }, latencyMs: 2 };
const BASE = 'Qwen3_TTS_12Hz_1_7B_Base';

describe('speech in a cloned or a described voice: txt2audio modes against the simulator', () => {
  const workspace = useWorkspace();

  async function manifest(jobs: string[]): Promise<string> {
    const file = path.join(workspace.dir, 'voices.yaml');
    const defaults = `  txt2audio: { model: ${BASE}, lang: English, speed: 1, format: wav, sample_rate: 24000 }`;
    const lines = ['version: 1', 'defaults:', defaults, 'jobs:', ...jobs.map((job) => `  - ${job}`)];
    await writeFile(file, `${lines.join('\n')}\n`);
    return file;
  }

  it('uploads the voice to clone with the submit (multipart), prices without it, and saves each result', async () => {
    await writeFile(path.join(workspace.dir, 'me.mp3'), mp3Frames(5));
    const file = await manifest([
      '{ id: clone-a, type: txt2audio, mode: voice_clone, ref_audio: me.mp3, ref_text: "Hello there.", text: "First line." }',
      '{ id: clone-b, type: txt2audio, mode: voice_clone, ref_audio: me.mp3, text: "Second line." }',
      '{ id: design, type: txt2audio, mode: voice_design, instruct: "a warm, slow voice", text: "Third line." }',
      '{ id: preset, type: txt2audio, model: Kokoro, lang: en-us, voice: af_sky, text: "Fourth line." }',
    ]);
    const sim = await workspace.startSim(FAST);
    const ledgerPath = path.join(workspace.dir, 'voices.mediabatch.db');
    const { report } = await estimateInProcess({ manifest: file, ledgerPath, baseUrl: sim.url, token: sim.token });
    // The two clones share their priced fields (the recording and its transcript are not priced).
    expect(report.byGroup.map((group) => group.jobs).sort()).toEqual([1, 1, 2]);
    // Its priced mode is shown with the group; the preset group's key is as it always was.
    expect(report.byGroup.find((group) => group.jobs === 2)?.params).toMatchObject({ mode: 'voice_clone' });
    expect(report.byGroup.find((group) => group.params['voice'] === 'af_sky')?.key).toBe('v1|txt2audio|Kokoro|af_sky|en-us|1|wav|24000');

    const outDir = path.join(workspace.dir, 'voices.out');
    const { result } = await runInProcessResult({ manifest: file, ledgerPath, outDir, baseUrl: sim.url, token: sim.token });
    // The simulator refuses a voice_clone submit without its recording: all four were taken.
    expect(sim.stats.accepted.map((job) => job.type)).toEqual(Array(4).fill('txt2audio'));
    expect(readdirSync(outDir).sort()).toEqual(['clone-a.wav', 'clone-b.wav', 'design.wav', 'preset.wav']);
    expect(readFileSync(path.join(outDir, 'clone-a.wav')).subarray(8, 12).toString('latin1')).toBe('WAVE');
    expect(result.summary.spentMicro).toBe(report.totalMicro);
  });

  it('refuses a clone without its recording, a recording too long or in a format the service lacks, a mode it lacks: exit 2, nothing sent', async () => {
    await writeFile(path.join(workspace.dir, 'long.mp3'), mp3Frames(12));
    await writeFile(path.join(workspace.dir, 'me.wav'), wavTone(24000, 5));
    const file = await manifest([
      '{ id: bare, type: txt2audio, mode: voice_clone, text: "x" }',
      '{ id: long, type: txt2audio, mode: voice_clone, ref_audio: long.mp3, text: "x" }',
      '{ id: wave, type: txt2audio, mode: voice_clone, ref_audio: me.wav, text: "x" }',
      '{ id: nameless, type: txt2audio, text: "x" }',
      '{ id: odd, type: txt2audio, mode: clone, text: "x" }',
    ]);
    const sim = await workspace.startSim(FAST);
    // A refusal of what was read: the CLI's main in this process (bad-input.test.ts shows exit 2 through a process).
    const validate = await mainInProcess(['validate', file, '--base-url', sim.url], { MEDIABATCH_TOKEN: sim.token });
    expect(validate.code).toBe(2);
    expect(validate.stderr).toContain(
      [
        `${file}:5:5 job "bare" (#1) ref_audio: expected a path to an audio file, got nothing; set it on the job`,
        `${file}:6:64 job "long" (#2) ref_audio: expected an audio file of 3 to 10 seconds, got "long.mp3" (12.0 seconds long)`,
        `${file}:7:64 job "wave" (#3) ref_audio: expected an audio file in MP3, MPEG audio, Ogg or MP4/MOV/M4A, got "me.wav" (its bytes are WAV)`,
        // Without a mode, a preset voice is asked for as it always was.
        `${file}:8:5 job "nameless" (#4) voice: expected a voice slug, got nothing; set it on the job or in defaults.txt2audio`,
        `${file}:9:39 job "odd" (#5) mode: expected one of "custom_voice", "voice_clone", "voice_design", got "clone"`,
        `5 problems in ${file}; nothing was sent.`,
      ].join('\n'),
    );
    expect(sim.stats.accepted).toHaveLength(0);
  });
});
