import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { messageOf } from './helpers.js';

// Text that reaches the service as written: a NUL or a lone surrogate there is a manifest problem.
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mediabatch-sent-text-'));
  await copyFile('manifests/images/beach.png', join(dir, 'beach.png'));
  await writeFile(join(dir, 'nul.txt'), 'First line.\nSecond\u0000line.\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function problems(lines: string[]): Promise<string> {
  const file = join(dir, 'case.yaml');
  await writeFile(file, `${lines.join('\n')}\n`);
  return (await messageOf(file)).replaceAll(dir, '<dir>');
}

const HEADER = [
  'version: 1',
  'defaults:',
  '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }',
  '  img2video: { model: M, width: 768, height: 432, steps: 8, frames: 97, fps: 24, guidance: 1, seed: 1 }',
  'jobs:',
];

test('NUL and unpaired surrogates in text, prompt and negative_prompt, each located', async () => {
  const message = await problems([
    ...HEADER,
    '  - { id: nul-escape, type: txt2audio, text: "Hello\\0world" }',
    '  - { id: surrogate, type: txt2audio, text: "Smile \\ud83d please" }',
    '  - { id: low-half, type: img2video, first_frame_image: beach.png, prompt: "\\udc00 waves" }',
    '  - { id: negative, type: img2video, first_frame_image: beach.png, prompt: waves, negative_prompt: "blur\\x00" }',
    '  - { id: paired, type: txt2audio, text: "Smile \\ud83d\\ude00 please" }',
  ]);
  expect(message).toMatchInlineSnapshot(`
    "<dir>/case.yaml:6:46 job "nul-escape" (#1) text: expected text without NUL characters, got "Hello\\u0000world" (a NUL character at character 6); remove it (in quotes, "\\0" and "\\x00" write one)
    <dir>/case.yaml:7:45 job "surrogate" (#2) text: expected text that can be encoded as UTF-8, got "Smile \\ud83d please" (an unpaired surrogate U+D83D at character 7); a "\\uD800"-style escape needs its other half; write the character itself
    <dir>/case.yaml:8:76 job "low-half" (#3) prompt: expected text that can be encoded as UTF-8, got "\\udc00 waves" (an unpaired surrogate U+DC00 at character 1); a "\\uD800"-style escape needs its other half; write the character itself
    <dir>/case.yaml:9:100 job "negative" (#4) negative_prompt: expected text without NUL characters, got "blur\\u0000" (a NUL character at character 5); remove it (in quotes, "\\0" and "\\x00" write one)
    4 problems in <dir>/case.yaml; nothing was sent."
  `);
});

test('a NUL in defaults is reported once, at the default, not once per job', async () => {
  const message = await problems([
    'version: 1',
    'defaults:',
    '  img2video: { model: M, width: 768, height: 432, steps: 8, frames: 97, fps: 24, guidance: 1, seed: 1, negative_prompt: "a\\0" }',
    'jobs:',
    '  - { id: one, type: img2video, first_frame_image: beach.png, prompt: waves }',
    '  - { id: two, type: img2video, first_frame_image: beach.png, prompt: sea }',
  ]);
  expect(message).toMatchInlineSnapshot(`
    "<dir>/case.yaml:3:121 defaults.img2video.negative_prompt: expected text without NUL characters, got "a\\u0000" (a NUL character at character 2); remove it (in quotes, "\\0" and "\\x00" write one)
    1 problem in <dir>/case.yaml; nothing was sent."
  `);
});

test('a text_file holding a NUL byte', async () => {
  const message = await problems([...HEADER, '  - { id: from-file, type: txt2audio, text_file: nul.txt }']);
  expect(message).toMatchInlineSnapshot(`
    "<dir>/case.yaml:6:50 job "from-file" (#1) text_file: expected text without NUL characters, got "nul.txt" (a NUL byte on line 2); is this a text file?
    1 problem in <dir>/case.yaml; nothing was sent."
  `);
});
