import { copyFile, writeFile } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mainInProcess } from '../helpers/main-in-process.js';
import { estimateInProcess, runInProcessResult } from '../helpers/in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { mp3Frames, mp4Movie } from '../support/media-files.js';

const KINDS = ['aud2txt', 'vid2txt', 'audiofile2txt', 'videofile2txt', 'transcribe'] as const;
const FAST = {
  pendingMs: Object.fromEntries(KINDS.map((kind) => [kind, 20])),
  processingMs: Object.fromEntries(KINDS.map((kind) => [kind, 40])),
  latencyMs: 2,
};
const SPACE = 'https://twitter.com/i/spaces/1eaKbrPAqbwKX';
const VIDEO = 'https://www.youtube.com/watch?v=jNQXAC9IVRw';

describe('speech to text: the five transcription kinds against the simulator', () => {
  const workspace = useWorkspace();

  async function manifest(jobs: string[]): Promise<string> {
    const file = path.join(workspace.dir, 'talks.yaml');
    const defaults = KINDS.map((kind) => `  ${kind}: { model: WhisperLargeV3, include_ts: false }`);
    const lines = ['version: 1', 'defaults:', ...defaults, 'jobs:', ...jobs.map((job) => `  - ${job}`)];
    await writeFile(file, `${lines.join('\n')}\n`);
    return file;
  }

  it('prices a URL by its URL and a file by its length (one call each), and saves each transcript as text', async () => {
    await writeFile(path.join(workspace.dir, 'a.mp3'), mp3Frames(4));
    await copyFile(path.join(workspace.dir, 'a.mp3'), path.join(workspace.dir, 'a-copy.mp3'));
    await writeFile(path.join(workspace.dir, 'talk.mp4'), mp4Movie(6, 'soun'));
    const file = await manifest([
      `{ id: space, type: aud2txt, audio_url: "${SPACE}" }`,
      `{ id: space-again, type: aud2txt, audio_url: "${SPACE}" }`,
      `{ id: clip, type: vid2txt, video_url: "${VIDEO}", include_ts: true }`,
      '{ id: a, type: audiofile2txt, audio: a.mp3 }',
      '{ id: a-copy, type: audiofile2txt, audio: a-copy.mp3, return_result_in_response: true }',
      '{ id: talk, type: videofile2txt, video: talk.mp4 }',
      '{ id: any-file, type: transcribe, source_file: a.mp3 }',
      `{ id: any-url, type: transcribe, source_url: "${VIDEO}" }`,
    ]);
    const sim = await workspace.startSim(FAST);
    const ledgerPath = path.join(workspace.dir, 'talks.mediabatch.db');
    const { report, jobs } = await estimateInProcess({ manifest: file, ledgerPath, baseUrl: sim.url, token: sim.token });
    // One call per URL (`space` twice) and per length (`a` and `a-copy` last as long): 6 calls for 8 jobs.
    expect(report.priceCalls).toBe(6);
    const priceOf = (id: string) => jobs.find((job) => job.id === id)?.priceMicro;
    expect(priceOf('space')).toBe(priceOf('space-again'));
    expect(priceOf('a')).toBe(priceOf('any-file'));

    const outDir = path.join(workspace.dir, 'talks.out');
    const { result } = await runInProcessResult({ manifest: file, ledgerPath, outDir, baseUrl: sim.url, token: sim.token });
    expect(sim.stats.accepted).toHaveLength(8);
    const ids = ['space', 'space-again', 'clip', 'a', 'a-copy', 'talk', 'any-file', 'any-url'];
    // Timestamps asked for (`clip`): its segments beside its text, as JSON.
    expect(readdirSync(outDir).sort()).toEqual([...ids.map((id) => `${id}.txt`), 'clip.json'].sort());
    expect(readFileSync(path.join(outDir, 'a-copy.txt'), 'utf8')).toContain('Welcome back to the show.');
    const segments = JSON.parse(readFileSync(path.join(outDir, 'clip.json'), 'utf8')) as { segments: unknown[] };
    expect(segments.segments).toHaveLength(2);
    // The service's own prices: the estimate is what the run spent.
    expect(result.summary.spentMicro).toBe(report.totalMicro);
  });

  it('refuses a file:// URL, audio the service does not take, and two sources: exit 2, located, nothing sent', async () => {
    await writeFile(path.join(workspace.dir, 'a.mp3'), mp3Frames(2));
    await writeFile(path.join(workspace.dir, 'b.mp4'), mp4Movie(2, 'soun'));
    const file = await manifest([
      '{ id: local, type: aud2txt, audio_url: "file:///home/me/space.mp3" }',
      '{ id: m4a, type: audiofile2txt, audio: b.mp4 }',
      `{ id: both, type: transcribe, source_url: "${VIDEO}", source_file: a.mp3 }`,
    ]);
    const sim = await workspace.startSim(FAST);
    // A refusal of what was read: the CLI's main in this process (bad-input.test.ts shows exit 2 through a process).
    const validate = await mainInProcess(['validate', file, '--base-url', sim.url], { MEDIABATCH_TOKEN: sim.token });
    expect(validate.code).toBe(2);
    expect(validate.stderr).toContain(
      [
        `${file}:9:44 job "local" (#1) audio_url: expected an http or https URL, got "file:///home/me/space.mp3"`,
        `${file}:10:44 job "m4a" (#2) audio: expected an audio file in MP3, MPEG audio, Ogg or WebM/Matroska, got "b.mp4" (its bytes are MP4/MOV/M4A)`,
        `${file}:11:107 job "both" (#3) source_file: expected source_url or source_file, got both`,
        `3 problems in ${file}; nothing was sent.`,
      ].join('\n'),
    );
    expect(sim.stats.accepted).toHaveLength(0);
    expect(sim.stats.calls.price).toBe(0);
  });
});
