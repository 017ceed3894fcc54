import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { loadManifest } from '../support/load-manifest.js';
import { FIXTURES, messageOf } from './helpers.js';

const HEADER = `version: 1
defaults:
  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }
  img2video: { model: Ltxv_13B_0_9_8_Distilled_FP8, width: 768, height: 432, steps: 1, frames: 120, fps: 30, guidance: 0, seed: 42 }
jobs:
`;
const SPEECH = '  - { type: txt2audio, text: "Hello there." }\n';
const VIDEO = '  - { type: img2video, prompt: "waves", first_frame_image: images/a.png }\n';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mediabatch-ids-'));
  await mkdir(join(dir, 'images'));
  await copyFile(`${FIXTURES}/valid/images/beach.png`, join(dir, 'images/a.png'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function idsOf(jobs: string, name = 'm.yaml'): Promise<string[]> {
  await writeFile(join(dir, name), HEADER + jobs);
  return (await loadManifest(join(dir, name))).jobs.map((job) => job.id);
}

describe('derived ids', () => {
  test('have the form <type>-<16 hex>', async () => {
    const [speech, video] = await idsOf(SPEECH + VIDEO);
    expect(speech).toMatch(/^txt2audio-[0-9a-f]{16}$/);
    expect(video).toMatch(/^img2video-[0-9a-f]{16}$/);
  });

  test('do not change when jobs are reordered or others are inserted', async () => {
    const before = await idsOf(SPEECH + VIDEO);
    const after = await idsOf(`  - { type: txt2audio, text: "Inserted." }\n${VIDEO}${SPEECH}`);
    expect(after.slice(1)).toEqual([before[1], before[0]]);
  });

  test('do not change when a value moves between defaults and the job, or keys are reordered', async () => {
    const [before] = await idsOf(SPEECH);
    const [after] = await idsOf('  - { voice: af_sky, text: "Hello there.", type: txt2audio }\n');
    expect(after).toBe(before);
  });

  test('do not change when an image is renamed but keeps its bytes', async () => {
    const [before] = await idsOf(VIDEO);
    await copyFile(join(dir, 'images/a.png'), join(dir, 'images/renamed.png'));
    const [after] = await idsOf(VIDEO.replace('a.png', 'renamed.png'));
    expect(after).toBe(before);
  });

  test('depend on the text, not on the name of the file holding it', async () => {
    await writeFile(join(dir, 'one.txt'), 'Hello there.');
    await writeFile(join(dir, 'two.txt'), 'Hello there.');
    const [inline] = await idsOf(SPEECH);
    const fromFiles = await idsOf('  - { type: txt2audio, text_file: one.txt }\n  - { type: txt2audio, text_file: two.txt, speed: 1.5 }\n');
    expect(fromFiles[0]).toBe(inline);
  });

  test.each([
    ['the text', SPEECH.replace('Hello there.', 'Hello there!')],
    ['a parameter', SPEECH.replace(' }', ', speed: 1.1 }')],
    ['a default', SPEECH.replace(' }', ', voice: af_bella }')],
    ['the type-specific model', SPEECH.replace(' }', ', model: Chatterbox }')],
  ])('change when %s changes', async (_what, changed) => {
    const [before] = await idsOf(SPEECH);
    const [after] = await idsOf(changed);
    expect(after).not.toBe(before);
  });

  test('change when an image changes its bytes under the same name', async () => {
    const [before] = await idsOf(VIDEO);
    await copyFile(`${FIXTURES}/valid/images/beach-dusk.png`, join(dir, 'images/a.png'));
    const [after] = await idsOf(VIDEO);
    expect(after).not.toBe(before);
  });

  test('change when a last frame is added, or the prompt changes', async () => {
    const [before] = await idsOf(VIDEO);
    const [withLast] = await idsOf(VIDEO.replace(' }', ', last_frame_image: images/a.png }'));
    const [otherPrompt] = await idsOf(VIDEO.replace('waves', 'calm waves'));
    expect(new Set([before, withLast, otherPrompt]).size).toBe(3);
  });

  test('a given id is kept as is', async () => {
    expect(await idsOf('  - { id: my.id_1-x, type: txt2audio, text: "Hi." }\n')).toEqual(['my.id_1-x']);
  });
});

describe('size limits of local files', () => {
  test('a text file over 1 MB and an image over 10 MB are refused with their size', async () => {
    await writeFile(join(dir, 'big.txt'), 'a'.repeat(1024 * 1024 + 1));
    await writeFile(join(dir, 'images/huge.png'), Buffer.alloc(10 * 1024 * 1024 + 100_000));
    await writeFile(join(dir, 'm.yaml'), `${HEADER}  - { id: long, type: txt2audio, text_file: big.txt }\n  - { id: huge, type: img2video, prompt: "x", first_frame_image: images/huge.png }\n`);
    const message = (await messageOf(join(dir, 'm.yaml'))).replaceAll(dir, '<tmp>');
    expect(message).toMatchInlineSnapshot(`
      "<tmp>/m.yaml:6:45 job "long" (#1) text_file: expected a text file of at most 1 MB, got "big.txt" (1048577 bytes); split it into several jobs
      <tmp>/m.yaml:7:66 job "huge" (#2) first_frame_image: expected an image of at most 10 MB, got "images/huge.png" (10.1 MB); scale it down or recompress it
      2 problems in <tmp>/m.yaml; nothing was sent."
    `);
  });
});
