import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { folderWith, removeFolders } from './sources/helpers.js';
import { messageOf } from './helpers.js';

afterAll(removeFolders);

const AUDIO = 'model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000';

describe("names of Object's own properties are unknown fields wherever a field is named", () => {
  test.each(['constructor', 'toString', 'hasOwnProperty', '__proto__'])('%s in defaults, on a job, as a CSV column and a JSON Lines key', async (name) => {
    const dir = await folderWith({ 'c.csv': `id,${name},text\nc1,1,hi\n`, 'j.jsonl': `{"id":"j1","${name}":1,"text":"hi"}\n` });
    const manifest = join(dir, 'm.yaml');
    const entry = `type: txt2audio, ${AUDIO}`;
    await writeFile(
      manifest,
      `version: 1\ndefaults:\n  txt2audio: { ${name}: 1 }\njobs:\n  - { id: a, type: txt2audio, text: hi, ${AUDIO}, ${name}: 1 }\nsources:\n  - { csv: c.csv, ${entry} }\n  - { jsonl: j.jsonl, ${entry} }\n`,
    );
    const lines = (await messageOf(manifest)).split('\n').map((line) => line.replaceAll(`${dir}/`, ''));
    expect(lines[0]).toMatch(new RegExp(`^c\\.csv:1:2 expected a column named like a field of txt2audio or mapped in columns:, got "${name}"`));
    expect(lines[1]).toMatch(new RegExp(`^j\\.jsonl:1:\\d+ (job "j1" )?${name}: unknown field`));
    expect(lines[2]).toMatch(new RegExp(`^m\\.yaml:3:16 defaults\\.txt2audio\\.${name}: unknown field; allowed here: model,`));
    expect(lines[3]).toMatch(new RegExp(`^m\\.yaml:5:\\d+ job "a" \\(#1\\) ${name}: unknown field; allowed here: id, type,`));
    expect(lines[4]).toBe('4 problems in c.csv, j.jsonl, m.yaml; nothing was sent.');
  });
});
