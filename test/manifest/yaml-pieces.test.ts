import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { writeLargeManifest } from '../../bench/manifest-bench.js';
import { parseInPieces } from '../../src/manifest/yaml-chunks.js';
import { parsePiece } from '../../src/manifest/yaml-source.js';
import { FIXTURES, messageOf } from './helpers.js';

// Reading in pieces must be invisible: the same values and the same positions as the whole parse.
const yamlIn = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.yaml')).map((name) => join(dir, name));
const FILES = [...yamlIn('manifests'), ...yamlIn(`${FIXTURES}/valid`), ...yamlIn(`${FIXTURES}/invalid`), ...yamlIn(`${FIXTURES}/catalogue`)];

test.each(FILES)('%s: pieces of 1 and 2 jobs agree with the whole document', (file) => {
  const text = readFileSync(file, 'utf8');
  for (const size of [1, 2]) {
    const pieces = parseInPieces(text, size);
    if (pieces !== undefined) expect(pieces).toEqual(parsePiece(text));
  }
});

test('the example manifests are plain enough to be read in pieces', () => {
  for (const file of yamlIn('manifests')) expect(parseInPieces(readFileSync(file, 'utf8'), 1), file).toBeDefined();
});

test('a generated 1,000-job manifest: pieces agree with the whole document', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mediabatch-pieces-'));
  try {
    const text = readFileSync(await writeLargeManifest(dir, 1_000, writeFile), 'utf8');
    const pieces = parseInPieces(text, 37);
    expect(pieces).toBeDefined();
    expect(pieces).toEqual(parsePiece(text));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

const PLAIN = ['version: 1', 'jobs:', '  - { type: txt2audio, text: a }', '  - type: txt2audio', '    text: b', 'budget: 1'];

test.each([
  ['flow jobs', ['version: 1', 'jobs: [{ type: txt2audio, text: a }]']],
  ['an anchor used in another piece', ['version: 1', 'jobs:', '  - &one { type: txt2audio, text: a }', '  - *one']],
  ['a merge of an anchor set in the header', ['version: 1', 'defaults:', '  txt2audio: &d { model: K }', 'jobs:', '  - { <<: *d, type: txt2audio, text: a }']],
  ['a document marker', ['---', ...PLAIN]],
  ['a tab', [...PLAIN.slice(0, 4), '\ttext: b']],
  ['a quoted text running over an item line', ['version: 1', 'jobs:', '  - { type: txt2audio, text: "a', '  - b" }']],
  ['a list deeper than the items after them', ['version: 1', 'jobs:', '  - { type: txt2audio, text: a }', ' - x']],
])('read whole, not in pieces: %s', (_name, lines) => {
  expect(parseInPieces(`${lines.join('\n')}\n`, 1)).toBeUndefined();
});

test('a syntax error in a late piece is reported where the whole parse puts it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mediabatch-pieces-'));
  try {
    const jobs = Array.from({ length: 300 }, (_, i) => `  - { id: j${i}, type: txt2audio, text: "line ${i}" }`);
    jobs[250] = '  - { id: j250, type: txt2audio, text: "unclosed }';
    const file = join(dir, 'broken.yaml');
    await writeFile(file, `version: 1\ndefaults:\n  txt2audio: { model: K }\njobs:\n${jobs.join('\n')}\n`);
    expect((await messageOf(file)).replaceAll(dir, '<dir>')).toMatchInlineSnapshot(`
      "<dir>/broken.yaml:255:51 YAML syntax: Missing closing "quote
      <dir>/broken.yaml:256:3 YAML syntax: Flow map in block collection must be sufficiently indented and end with a }
      2 problems in <dir>/broken.yaml; nothing was sent."
    `);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a merge of a mapping written in place is read in pieces, as the whole parse reads it', () => {
  const jobs = Array.from({ length: 5 }, (_, i) => [`  - <<: { voice: v${i}, lang: en-us }`, '    type: txt2audio', `    text: "line ${i}"`]).flat();
  const text = `${['version: 1', 'jobs:', ...jobs].join('\n')}\n`;
  const pieces = parseInPieces(text, 2);
  expect(pieces).toBeDefined();
  expect(pieces).toEqual(parsePiece(text));
  expect((pieces?.value as { jobs: unknown[] }).jobs[3]).toEqual({ voice: 'v3', lang: 'en-us', type: 'txt2audio', text: 'line 3' });
});
