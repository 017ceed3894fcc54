/**
 * One job of every kind in the registry, end to end against the simulator: validated, estimated
 * (the estimate's total is what the run then spends, the service's own prices), run, and every
 * result on disk in its form; then again with a kill -9 in the middle of the sends, resumed with
 * nothing sent twice. A kind added to the registry fails here until it has its job below.
 */
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JOB_KINDS, JOB_TYPES, kindOf, type JobType } from '../../src/jobs/index.js';
import { hasStackTrace } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { estimateInProcess, readRunJson, runInProcessResult } from '../helpers/in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { byState, cliAgainst, collect, delay, ledgerRows, mainAgainst, startAgainst, type StatusJson } from '../reliability/helpers.js';
import { mp3Frames, mp4Movie, webmMovie } from '../support/media-files.js';
import { startWebhookRun } from '../webhooks/helpers.js';

/** Each kind's job, as a flow mapping's fields after `id` and `type` (its model and the rest from `defaults`). */
const ONE_OF_EACH: Readonly<Record<string, string>> = {
  txt2audio: 'text: "Welcome to the show."',
  img2video: 'prompt: "slow waves roll onto the beach", first_frame_image: beach.png',
  txt2img: 'prompt: "a lighthouse at dusk"',
  txt2video: 'prompt: "fog over the harbour"',
  txt2embedding: 'input: "a lighthouse at dusk"',
  'vid-upscale': 'video: clip.webm',
  'img-rmbg': 'image: beach.png',
  'img-upscale': 'image: beach.png',
  img2txt: 'image: beach.png',
  'vid-rmbg': 'video: clip.mp4',
  'video-replace': 'video: clip.mp4, ref_image: beach.png',
  aud2video: 'prompt: "a lighthouse keeper sings", audio: song.mp3, first_frame_image: beach.png',
  transcribe: 'source_file: song.mp3',
  aud2txt: 'audio_url: "https://media.example/talk.mp3"',
  vid2txt: 'video_url: "https://media.example/talk.mp4"',
  audiofile2txt: 'audio: song.mp3',
  videofile2txt: 'video: clip.mp4',
  txt2music: 'caption: "a calm sea shanty"',
  img2img: 'prompt: "make it dusk", image: beach.png',
};

const VIDEO = '{ model: Ltxv_13B_0_9_8_Distilled_FP8, width: 768, height: 432, steps: 1, frames: 120, fps: 30, guidance: 0, seed: 42 }';

const WHISPER = '{ model: WhisperLargeV3, include_ts: true }';

const DEFAULTS: Readonly<Record<string, string>> = {
  txt2audio: '{ model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }',
  img2video: VIDEO,
  txt2img: '{ model: Flux1schnell, width: 512, height: 512, guidance: 0, steps: 4, seed: 7 }',
  txt2video: VIDEO,
  txt2embedding: '{ model: Bge_M3_FP16 }',
  'vid-upscale': '{ model: RealESRGAN_Vid_x4 }',
  'img-rmbg': '{ model: Ben2 }',
  'img-upscale': '{ model: RealESRGAN_x4plus }',
  img2txt: '{ model: Nanonets_Ocr_S_F16 }',
  'vid-rmbg': '{ model: RMBG-1.4 }',
  'video-replace': '{ model: Wan2_2_Animate_14B_INT8 }',
  aud2video: '{ model: Ltx2_3_22B_Dist_INT8, width: 768, height: 432, frames: 121, fps: 24, seed: 3 }',
  transcribe: WHISPER,
  aud2txt: WHISPER,
  vid2txt: WHISPER,
  audiofile2txt: WHISPER,
  videofile2txt: WHISPER,
  txt2music:
    '{ model: AceStep_1_5_Turbo, lyrics: "[Instrumental]", duration: 30, inference_steps: 8, guidance_scale: 1, seed: -1, format: mp3 }',
  img2img: '{ model: QwenImageEdit_Plus_NF4, steps: 40, seed: 1 }',
};

/** Every kind quick: a run of one job each takes about a second. */
const FAST = {
  pendingMs: Object.fromEntries(JOB_TYPES.map((type) => [type, 20])),
  processingMs: Object.fromEntries(JOB_TYPES.map((type) => [type, 40])),
  latencyMs: 2,
};

const idOf = (type: string): string => `one-${type}`;

describe('one job of every kind', () => {
  const workspace = useWorkspace();

  async function writeManifest(): Promise<string> {
    const dir = workspace.dir;
    await copyFile(path.resolve('manifests/images/beach.png'), path.join(dir, 'beach.png'));
    await writeFile(path.join(dir, 'clip.webm'), webmMovie(3, 640, 360));
    await writeFile(path.join(dir, 'clip.mp4'), mp4Movie(3));
    await writeFile(path.join(dir, 'song.mp3'), mp3Frames(4));
    const lines = [
      'version: 1',
      'defaults:',
      ...JOB_TYPES.filter((type) => DEFAULTS[type] !== undefined).map((type) => `  ${type}: ${DEFAULTS[type]}`),
      'jobs:',
      ...JOB_TYPES.map((type) => `  - { id: ${idOf(type)}, type: ${type}, ${ONE_OF_EACH[type]} }`),
    ];
    const file = path.join(dir, 'every-kind.yaml');
    await writeFile(file, `${lines.join('\n')}\n`);
    return file;
  }

  /** What a kind's result must look like on disk: a text, an embedding, or media with its own extension. */
  async function expectResult(type: JobType, output: string): Promise<void> {
    const media = kindOf(type).output.media;
    if (media === 'text') {
      expect(output).toBe(path.join(path.dirname(output), `${idOf(type)}.txt`));
      expect((await readFile(output, 'utf8')).trim()).not.toBe('');
    } else if (media === 'embedding') {
      expect(path.basename(output)).toBe(`${idOf(type)}.json`);
      const saved = JSON.parse(await readFile(output, 'utf8')) as { embedding: unknown[] };
      expect(saved.embedding.length).toBeGreaterThan(0);
      expect(saved.embedding.every((value) => typeof value === 'number')).toBe(true);
    } else {
      expect(path.basename(output)).toMatch(new RegExp(`^${idOf(type)}\\.[a-z0-9]+$`));
      expect((await readFile(output)).length).toBeGreaterThan(0);
    }
  }

  it('has a job for every kind in the registry', () => {
    expect(Object.keys(ONE_OF_EACH).sort()).toEqual([...JOB_TYPES].sort());
  });

  it('validates, estimates at the service\'s prices, runs and saves every result in its form', async () => {
    const manifest = await writeManifest();
    const sim = await workspace.startSim(FAST);
    // The CLI's main in this process; the kill below shows a run of every kind through a process.
    const validate = await mainInProcess(['validate', manifest, '--base-url', sim.url], { MEDIABATCH_TOKEN: sim.token });
    expect(validate.code, validate.stderr).toBe(0);

    const ledgerPath = path.join(workspace.dir, 'every-kind.mediabatch.db');
    const { report } = await estimateInProcess({ manifest, ledgerPath, baseUrl: sim.url, token: sim.token });
    expect(report.jobs).toBe(JOB_KINDS.length);

    const balanceBefore = sim.balanceUsd;
    const outDir = path.join(workspace.dir, 'every-kind.out');
    const { result } = await runInProcessResult({ manifest, ledgerPath, outDir, baseUrl: sim.url, token: sim.token });
    expect(sim.stats.accepted.map((job) => job.type).sort()).toEqual([...JOB_TYPES].sort());
    // What the estimate said is what the service took: its own prices, each job once.
    expect(result.summary.spentMicro).toBe(report.totalMicro);
    // The service counts in fractions of a micro-dollar; the ledger rounds each price up to a whole one.
    const takenMicro = (balanceBefore - sim.balanceUsd) * 1e6;
    expect(report.totalMicro - takenMicro).toBeGreaterThanOrEqual(-1e-3);
    expect(report.totalMicro - takenMicro).toBeLessThan(JOB_TYPES.length);
    const status = await readRunJson<StatusJson>(outDir);
    for (const type of JOB_TYPES) {
      const job = status.jobs.find((one) => one.id === idOf(type));
      expect(job?.state, type).toBe('done');
      await expectResult(type, job?.output as string);
    }
  });

  it('follows every kind by webhooks: each job done from its deliveries, its result in its form', async () => {
    const manifest = await writeManifest();
    const sim = await workspace.startSim(FAST);
    const hooked = await startWebhookRun({ sim, manifest });
    const { summary } = await hooked.done;
    expect(sim.stats.duplicates()).toEqual([]);
    expect(sim.stats.webhooks.events).toBeGreaterThanOrEqual(JOB_TYPES.length);
    // Followed by what the deliveries said, not by asking.
    expect(sim.stats.calls.status).toBe(0);
    for (const type of JOB_TYPES) {
      const job = summary.jobs.find((one) => one.id === idOf(type));
      expect(job?.state, type).toBe('done');
      await expectResult(type, job?.output as string);
    }
  });

  it('refuses an image given as audio, a missing required field and a file:// URL: exit 2, located, nothing sent', async () => {
    await writeManifest();
    const file = path.join(workspace.dir, 'bad.yaml');
    const jobs = [
      '{ id: mute, type: aud2video, prompt: "x", audio: beach.png }',
      '{ id: blank, type: img2img, image: beach.png }',
      '{ id: local, type: aud2txt, audio_url: "file:///etc/passwd" }',
    ];
    const defaults = ['aud2video', 'img2img', 'aud2txt'].map((type) => `  ${type}: ${DEFAULTS[type]}`);
    await writeFile(file, ['version: 1', 'defaults:', ...defaults, 'jobs:', ...jobs.map((job) => `  - ${job}`), ''].join('\n'));
    const sim = await workspace.startSim(FAST);
    const run = await mainAgainst(sim, ['run', file]);
    expect(run.code, run.stderr).toBe(2);
    expect(hasStackTrace(run.stderr), run.stderr).toBe(false);
    expect(run.stderr).toContain(
      [
        `${file}:7:54 job "mute" (#1) audio: expected an audio file, got "beach.png" (its bytes are PNG, an image)`,
        `${file}:8:5 job "blank" (#2) prompt: expected non-empty text, got nothing; set it on the job`,
        `${file}:9:44 job "local" (#3) audio_url: expected an http or https URL, got "file:///etc/passwd"`,
      ].join('\n'),
    );
    expect(run.stderr).toContain('nothing was sent');
    expect([sim.stats.calls.submit, sim.stats.calls.price]).toEqual([0, 0]);
  });

  it('resumes after a kill -9 in the middle of the sends with nothing sent twice', async () => {
    const manifest = await writeManifest();
    const sim = await workspace.startSim({ ...FAST, latencyMs: 40 });
    const db = path.join(workspace.dir, 'every-kind.mediabatch.db');
    const child = startAgainst(sim, ['run', manifest, '--concurrency', '2']);
    let over = false;
    const ended = collect(child).finally(() => (over = true));
    while (sim.stats.accepted.length < Math.ceil(JOB_TYPES.length / 2) && !over) await delay(5);
    child.kill('SIGKILL');
    await ended;
    const caughtSubmitting = (await ledgerRows(db)).filter((row) => row.state === 'submitting').map((row) => row.id);

    const resumed = await cliAgainst(sim, ['run', manifest, '--json']);
    expect(hasStackTrace(resumed.stderr), resumed.stderr).toBe(false);
    expect(resumed.code, resumed.stderr).toBe(caughtSubmitting.length === 0 ? 0 : 1);
    expect(sim.stats.duplicates()).toEqual([]);
    const summary = JSON.parse(resumed.stdout) as StatusJson;
    // Only a job caught between its submit and its answer is in doubt; every other one is done.
    expect(summary.jobs.filter((job) => job.state === 'in_doubt').map((job) => job.id).sort()).toEqual(caughtSubmitting.sort());
    expect(byState(await ledgerRows(db))['done']).toBe(JOB_TYPES.length - caughtSubmitting.length);
    for (const type of JOB_TYPES) {
      const job = summary.jobs.find((one) => one.id === idOf(type));
      if (job?.state !== 'in_doubt') await expectResult(type, job?.output as string);
    }
  });
});
