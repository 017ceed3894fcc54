import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadManifest } from '../../src/manifest/load.js';
import type { Txt2AudioJob } from '../../src/manifest/types.js';
import { useWorkspace } from '../helpers/workspace.js';
import { messageOf } from './helpers.js';

const DEFAULTS = ['version: 1', 'defaults:', '  txt2audio: { model: Kokoro, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }'];

describe('anchors and aliases', () => {
  const ws = useWorkspace();
  const write = async (lines: string[]): Promise<string> => {
    const file = join(ws.dir, 'm.yaml');
    await writeFile(file, `${lines.join('\n')}\n`);
    return file;
  };
  const problems = async (lines: string[]): Promise<string> => (await messageOf(await write(lines))).replaceAll(ws.dir, '<dir>');

  test('2,000 jobs sharing one anchor are an ordinary manifest, not an alias bomb', async () => {
    const jobs = ['  - { id: j0, type: txt2audio, voice: &v bf_emma, text: "line 0" }'];
    for (let i = 1; i < 2_000; i++) jobs.push(`  - { id: j${i}, type: txt2audio, voice: *v, text: "line ${i}" }`);
    const manifest = await loadManifest(await write([...DEFAULTS, 'jobs:', ...jobs]));
    expect(manifest.jobs).toHaveLength(2_000);
    expect(new Set((manifest.jobs as Txt2AudioJob[]).map((job) => job.params.voice))).toEqual(new Set(['bf_emma']));
  });

  test('billion laughs is refused where the first alias is', async () => {
    const laughs = ['x: &l0 "lol"'];
    for (let level = 1; level <= 9; level += 1) laughs.push(`x${level}: &l${level} [${Array(9).fill(`*l${level - 1}`).join(', ')}]`);
    expect(await problems([...laughs, 'version: 1', 'jobs: [{ type: txt2audio, text: a }]'])).toMatchInlineSnapshot(`
      "<dir>/m.yaml:2:10 YAML aliases: expected at most 5000000 values once anchors are expanded, got more (an alias bomb?); write the values out instead
      1 problem in <dir>/m.yaml; nothing was sent."
    `);
  });

  test('an alias without an anchor before it is named, not called a bomb', async () => {
    expect(await problems([...DEFAULTS, 'jobs:', '  - { type: txt2audio, voice: *narrator, text: a }', '  - { type: txt2audio, voice: &narrator af_sky, text: b }']))
      .toMatchInlineSnapshot(`
        "<dir>/m.yaml:5:31 YAML aliases: expected an anchor &narrator before the alias *narrator, found none; set the anchor first
        1 problem in <dir>/m.yaml; nothing was sent."
      `);
  });

  test('an alias inside the value its anchor names is refused: it would repeat forever', async () => {
    expect(await problems([...DEFAULTS, 'jobs: &all', '  - { type: txt2audio, text: a }', '  - *all'])).toMatchInlineSnapshot(`
      "<dir>/m.yaml:6:5 YAML aliases: expected *all outside the value &all names, got it inside (it would repeat forever); write the value out instead
      1 problem in <dir>/m.yaml; nothing was sent."
    `);
  });
});
