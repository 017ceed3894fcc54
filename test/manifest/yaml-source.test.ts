import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { parseManifestSource } from '../../src/manifest/yaml-source.js';
import { messageOf } from './helpers.js';

// A manifest is read as one YAML document: a problem far down a long one is located like one at the top.
const LONG_JOBS = Array.from({ length: 300 }, (_, i) => `  - { id: j${i}, type: txt2audio, text: "line ${i}" }`);

async function problemsIn(lines: readonly string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mediabatch-source-'));
  try {
    const file = join(dir, 'long.yaml');
    await writeFile(file, `${['version: 1', 'defaults:', '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }', 'jobs:', ...lines].join('\n')}\n`);
    return (await messageOf(file)).replaceAll(dir, '<dir>');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('a syntax error far down a long manifest is reported where it is', async () => {
  const jobs = [...LONG_JOBS];
  jobs[250] = '  - { id: j250, type: txt2audio, text: "unclosed }';
  expect(await problemsIn(jobs)).toMatchInlineSnapshot(`
    "<dir>/long.yaml:255:51 YAML syntax: Missing closing "quote
    <dir>/long.yaml:256:3 YAML syntax: Flow map in block collection must be sufficiently indented and end with a }
    2 problems in <dir>/long.yaml; nothing was sent."
  `);
});

test('fields far down a long manifest are located at their key, their value or their job', async () => {
  const jobs = [...LONG_JOBS];
  jobs[250] = '  - { id: j250, type: txt2audio, voise: af_sky, text: "line 250", speed: fast }';
  jobs[280] = '  - { id: j280, type: txt2audio }';
  expect(await problemsIn(jobs)).toMatchInlineSnapshot(`
    "<dir>/long.yaml:255:34 job "j250" (#251) voise: unknown field; did you mean "voice"?
    <dir>/long.yaml:255:74 job "j250" (#251) speed: expected a number above 0, got "fast"
    <dir>/long.yaml:285:5 job "j280" (#281) text: expected text or text_file, got neither
    3 problems in <dir>/long.yaml; nothing was sent."
  `);
});

test('a merge of a mapping written in place gives each job its fields', () => {
  const jobs = Array.from({ length: 5 }, (_, i) => [`  - <<: { voice: v${i}, lang: en-us }`, '    type: txt2audio', `    text: "line ${i}"`]).flat();
  const { root } = parseManifestSource(`${['version: 1', 'jobs:', ...jobs].join('\n')}\n`, 'm.yaml');
  expect((root as { jobs: unknown[] }).jobs[3]).toEqual({ voice: 'v3', lang: 'en-us', type: 'txt2audio', text: 'line 3' });
});
