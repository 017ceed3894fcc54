import { afterEach, describe, expect, test } from 'vitest';
import { fieldsOf, folderWith, readFirst, removeFolders } from './helpers.js';

afterEach(removeFolders);

const manifest = (entry: string) => `version: 1\nsources:\n${entry}`;

describe('matrix rows', () => {
  test('every combination, the first list outermost; located at each value; ids from {F.stem}, {F.index}, {F}', async () => {
    const dir = await folderWith({});
    const read = await readFirst(
      manifest(`  - matrix:
      first_frame_image: [images/beach.png, images/forest.png]
      prompt: ["slow waves", "a drone shot over the scene", "Crème brûlée"]
    type: img2video
    id: "promo-{first_frame_image.stem}-{prompt.index}-{prompt}"
    seed: 7
`),
      dir,
    );
    expect(read.problems).toEqual([]);
    expect(fieldsOf(read).map((fields) => [fields['first_frame_image'], fields['prompt'], fields['id']])).toEqual([
      ['images/beach.png', 'slow waves', 'promo-beach-1-slow-waves'],
      ['images/beach.png', 'a drone shot over the scene', 'promo-beach-2-a-drone-shot-over-the-scene'],
      ['images/beach.png', 'Crème brûlée', 'promo-beach-3-Creme-brulee'],
      ['images/forest.png', 'slow waves', 'promo-forest-1-slow-waves'],
      ['images/forest.png', 'a drone shot over the scene', 'promo-forest-2-a-drone-shot-over-the-scene'],
      ['images/forest.png', 'Crème brûlée', 'promo-forest-3-Creme-brulee'],
    ]);
    expect(read.rows.every((row) => row.fields['seed'] === 7 && row.type === 'img2video')).toBe(true);
    expect(read.rows.map((row) => row.ordinal)).toEqual([0, 1, 2, 3, 4, 5]);
    const fifth = read.rows[4];
    expect(fifth?.at).toEqual({ file: 'book/manifest.yaml', line: 4, col: 7 });
    expect(fifth?.fieldAt('first_frame_image')).toEqual({ file: 'book/manifest.yaml', line: 4, col: 45 });
    expect(fifth?.fieldAt('prompt')).toEqual({ file: 'book/manifest.yaml', line: 5, col: 30 });
    expect(fifth?.fieldAt('seed')).toEqual({ file: 'book/manifest.yaml', line: 8, col: 11 });
  });

  test('a type list makes jobs of several kinds; without a template rows carry no id', async () => {
    const dir = await folderWith({});
    const read = await readFirst(manifest('  - matrix:\n      type: [txt2img, txt2video]\n      prompt: [a fox]\n'), dir);
    expect(read.problems).toEqual([]);
    expect(fieldsOf(read)).toEqual([
      { type: 'txt2img', prompt: 'a fox' },
      { type: 'txt2video', prompt: 'a fox' },
    ]);
  });

  test('placeholders it cannot fill, and values that make no id', async () => {
    const dir = await folderWith({});
    const unknown = await readFirst(manifest('  - matrix:\n      prompt: [a, b]\n    type: txt2img\n    id: "x-{promt}-{seed.index}"\n    seed: 3\n'), dir);
    expect(unknown.problems).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:6:9 id: expected placeholders this source fills ({n}, {prompt}, {seed}), got {promt} in "x-{promt}-{seed.index}"; did you mean {prompt}?",
      ]
    `);
    const seedIndex = await readFirst(manifest('  - matrix:\n      prompt: [a, b]\n    type: txt2img\n    id: "x-{seed.index}"\n    seed: 3\n'), dir);
    expect(seedIndex.problems).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:6:9 id: expected placeholders this source fills ({n}, {prompt}, {seed}), got {seed.index} in "x-{seed.index}"; only a list of a matrix has an index; {n} numbers the rows",
      ]
    `);
    const unsafe = await readFirst(manifest('  - matrix:\n      prompt: ["猫", "dog"]\n    type: txt2img\n    id: "x-{prompt}"\n'), dir);
    expect(unsafe.rows.map((row) => row.fields['id'])).toEqual(['x-dog']);
    expect(unsafe.problems).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:4:16 id: expected a value with letters or digits for {prompt}, got "猫"; use {prompt.index}",
      ]
    `);
    const lists = await readFirst(manifest('  - matrix:\n      loras: [[{ name: ink, weight: 1 }], []]\n      prompt: [a]\n    type: txt2img\n    id: "x-{loras}"\n'), dir);
    expect(lists.problems).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:4:15 id: expected a text or number value for {loras}, got [{"name":"ink","weight":1}]; use {loras.index}",
        "book/manifest.yaml:4:43 id: expected a text or number value for {loras}, got []; use {loras.index}",
      ]
    `);
  });
});
