import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadManifest } from '../support/load-manifest.js';
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
    expect(new Set(manifest.jobs.map((job) => job.params['voice']))).toEqual(new Set(['bf_emma']));
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

  test('a merge key merges: <<: *anchor gives a job the anchor\'s fields, its own fields winning wherever written', async () => {
    const manifest = await loadManifest(
      await write([
        ...DEFAULTS,
        'jobs:',
        '  - &british { id: first, type: txt2audio, voice: bf_emma, lang: en-gb, speed: 1.25, text: "First." }',
        '  - <<: *british',
        '    id: second',
        '    text: "Second."',
        '  - { speed: 2, <<: *british, id: third, format: wav, text: "Third." }',
        '  - { <<: [{ voice: bm_george }, *british], id: fourth, text: "Fourth." }',
      ]),
    );
    const [first, second, third, fourth] = manifest.jobs;
    expect(first?.params).toEqual({ model: 'Kokoro', voice: 'bf_emma', lang: 'en-gb', speed: 1.25, format: 'mp3', sample_rate: 24000 });
    expect(second).toMatchObject({ id: 'second', text: 'Second.', params: first?.params });
    expect(third).toMatchObject({ id: 'third', text: 'Third.', params: { ...first?.params, speed: 2, format: 'wav' } });
    // In a list of sources, the earlier wins.
    expect(fourth).toMatchObject({ id: 'fourth', params: { ...first?.params, voice: 'bm_george' } });
    // A merged field has no line of its own in the job: it is placed at the job.
    expect(second?.fieldPositions['voice']).toEqual({ line: 6, col: 5 });
  });

  test('2,000 jobs each merging one anchor validate fine', async () => {
    const jobs = ['  - &common { type: txt2audio, voice: bf_emma, lang: en-gb, text: "line 0" }'];
    for (let i = 1; i < 2_000; i++) jobs.push('  - <<: *common', `    text: "line ${i}"`);
    const manifest = await loadManifest(await write([...DEFAULTS, 'jobs:', ...jobs]));
    expect(manifest.jobs).toHaveLength(2_000);
    expect(new Set(manifest.jobs.map((job) => `${String(job.params['voice'])} ${String(job.params['lang'])}`))).toEqual(new Set(['bf_emma en-gb']));
  });

  test('an unknown key inside a merged mapping is still reported, for every job that merges it', async () => {
    expect(
      await problems([
        ...DEFAULTS,
        'jobs:',
        '  - &common { type: txt2audio, voise: bf_emma, text: "one" }',
        '  - <<: *common',
        '    text: "two"',
      ]),
    ).toMatchInlineSnapshot(`
      "<dir>/m.yaml:5:13 job (#1) voice: expected a voice slug, got nothing; set it on the job or in defaults.txt2audio
      <dir>/m.yaml:5:32 job (#1) voise: unknown field; did you mean "voice"?
      <dir>/m.yaml:6:5 job (#2) voise: unknown field; did you mean "voice"?
      <dir>/m.yaml:6:5 job (#2) voice: expected a voice slug, got nothing; set it on the job or in defaults.txt2audio
      4 problems in <dir>/m.yaml; nothing was sent."
    `);
  });

  test('a merge of something other than mappings is refused where it is written', async () => {
    expect(await problems([...DEFAULTS, 'jobs:', '  - &voice_only bf_emma', '  - { <<: *voice_only, type: txt2audio, text: a }'])).toMatchInlineSnapshot(`
      "<dir>/m.yaml:6:11 YAML merge: expected a mapping (or an alias of one, or a list of them) after <<, got text; merge only mappings
      1 problem in <dir>/m.yaml; nothing was sent."
    `);
  });

  test('merging one large mapping many times is bounded like aliases', async () => {
    const keys = Array.from({ length: 3_000 }, (_, i) => `k${i}: ${i}`).join(', ');
    const merges = Array.from({ length: 2_000 }, () => '  - { <<: *wide, type: txt2audio, text: a }');
    expect(await problems([...DEFAULTS, `x: &wide { ${keys} }`, 'jobs:', ...merges])).toMatchInlineSnapshot(`
      "<dir>/m.yaml:6:11 YAML aliases: expected at most 5000000 values once anchors are expanded, got more (an alias bomb?); write the values out instead
      1 problem in <dir>/m.yaml; nothing was sent."
    `);
  });

  test('an anchor name in a message is escaped and cut short', async () => {
    const name = `a\u202e${'n'.repeat(1_000)}`;
    const message = await problems([...DEFAULTS, 'jobs:', `  - { type: txt2audio, voice: *${name}, text: a }`]);
    expect(message.split('\n')[0]).toBe(
      `<dir>/m.yaml:5:31 YAML aliases: expected an anchor &a\\u202e${'n'.repeat(37)}… before the alias *a\\u202e${'n'.repeat(37)}…, found none; set the anchor first`,
    );
  });
});
