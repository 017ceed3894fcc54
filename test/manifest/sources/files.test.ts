import { symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { loadManifest } from '../../support/load-manifest.js';
import { messageOf } from '../helpers.js';
import { fieldsOf, folderWith, readFirst, removeFolders } from './helpers.js';

afterEach(removeFolders);

const manifest = (entry: string) => `version: 1\nsources:\n${entry}`;

describe('files rows', () => {
  test('one row per matching file, sorted by path, the path in `field`, ids from {stem} by default', async () => {
    const dir = await folderWith({
      'chapters/ch-02.txt': 'Two.',
      'chapters/ch-01.txt': 'One.',
      'chapters/ch-10.txt': 'Ten.',
      'chapters/notes.md': 'not matched',
      'chapters/.hidden.txt': 'not matched either',
    });
    const read = await readFirst(manifest('  - files: chapters/*.txt\n    type: txt2audio\n    field: text_file\n    voice: bf_emma\n'), dir);
    expect(read.problems).toEqual([]);
    expect(fieldsOf(read)).toEqual([
      { type: 'txt2audio', id: 'ch-01', text_file: 'chapters/ch-01.txt', voice: 'bf_emma' },
      { type: 'txt2audio', id: 'ch-02', text_file: 'chapters/ch-02.txt', voice: 'bf_emma' },
      { type: 'txt2audio', id: 'ch-10', text_file: 'chapters/ch-10.txt', voice: 'bf_emma' },
    ]);
    expect(read.rows.map((row) => row.ordinal)).toEqual([0, 1, 2]);
    // Every row is located at the entry's pattern in the manifest; the entry's own fields where they are.
    expect(read.rows[2]?.at).toEqual({ file: 'book/manifest.yaml', line: 3, col: 12 });
    expect(read.rows[2]?.fieldAt('text_file')).toEqual({ file: 'book/manifest.yaml', line: 3, col: 12 });
    expect(read.rows[2]?.fieldAt('voice')).toEqual({ file: 'book/manifest.yaml', line: 6, col: 12 });
  });

  test('id templates: {stem}, {name}, {ext}, {dir}, {n} and the entry\'s fields', async () => {
    const dir = await folderWith({ 'shots/beach/Dawn Light.png': 'x', 'shots/forest/mist.jpeg': 'y' });
    const read = await readFirst(
      manifest(`  - files: "shots/**/*.{png,jpeg}"
    type: img2video
    field: first_frame_image
    prompt: slow waves
    id: "{n}-{dir}-{stem}-{ext}-{prompt}"
`),
      dir,
    );
    expect(read.problems).toEqual([]);
    expect(read.rows.map((row) => row.fields['id'])).toEqual(['1-shots-beach-Dawn-Light-png-slow-waves', '2-shots-forest-mist-jpeg-slow-waves']);
    expect(read.rows[0]?.fields['first_frame_image']).toBe('shots/beach/Dawn Light.png');
  });

  test('a pattern never leaves the manifest\'s folder; a link to a folder is not followed', async () => {
    const outside = await folderWith({ 'secret/key.txt': 'x' });
    const dir = await folderWith({ 'in/a.txt': 'a' });
    await symlink(join(outside, 'secret'), join(dir, 'in', 'linked'));
    const up = await readFirst(manifest('  - files: ../*/secret/*.txt\n    type: txt2audio\n    field: text_file\n'), dir);
    expect(up.problems).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:3:12 files: expected a pattern inside the manifest's folder, got "../*/secret/*.txt"; a files pattern never leaves the manifest's folder; move the files into it",
      ]
    `);
    const absolute = await readFirst(manifest(`  - files: ${outside}/**/*.txt\n    type: txt2audio\n    field: text_file\n`), dir, { allowOutside: true });
    expect(absolute.problems.map((p) => p.replace(outside, '<outside>'))).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:3:12 files: expected a pattern inside the manifest's folder, got "<outside>/**/*.txt"; a files pattern never leaves the manifest's folder; move the files into it",
      ]
    `);
    const inside = await readFirst(manifest('  - files: "in/**/*.txt"\n    type: txt2audio\n    field: text_file\n'), dir);
    expect(inside.rows.map((row) => row.fields['text_file'])).toEqual(['in/a.txt']);
  });

  test('a pattern that matches nothing, an id template with a placeholder files do not have', async () => {
    const dir = await folderWith({ 'a.txt': 'a' });
    const none = await readFirst(manifest('  - files: chapter/*.txt\n    type: txt2audio\n    field: text_file\n'), dir);
    expect(none.problems).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:3:12 files: expected at least one matching file, got none for "chapter/*.txt"; the pattern is relative to the manifest's folder, and * matches no name that starts with a dot",
      ]
    `);
    const template = await readFirst(manifest('  - files: "*.txt"\n    type: txt2audio\n    field: text_file\n    id: "x-{stem.index}"\n'), dir);
    expect(template.problems).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:6:9 id: expected placeholders this source fills ({n}, {stem}, {name}, {ext}, {dir}, {text_file}), got {stem.index} in "x-{stem.index}"; only a list of a matrix has an index; {n} numbers the rows",
      ]
    `);
    const unsafe = await readFirst(manifest('  - files: "*.txt"\n    type: txt2audio\n    field: text_file\n    id: "{dir}"\n'), dir);
    expect(unsafe.problems).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:3:12 id: expected a value with letters or digits for {dir}, got ""; use another placeholder",
      ]
    `);
  });

  test('a file that is a link is a job, checked like any file: inside is fine, outside only with --allow-outside-files', async () => {
    const outside = await folderWith({ 'o.txt': 'Outside.' });
    const dir = await folderWith({ 'a.txt': 'A.', 'sub/real.txt': 'Real.' });
    await symlink(join(dir, 'sub', 'real.txt'), join(dir, 'link-in.txt'));
    await symlink(join(outside, 'o.txt'), join(dir, 'link-out.txt'));
    const read = await readFirst(manifest('  - files: "*.txt"\n    type: txt2audio\n    field: text_file\n'), dir);
    expect(read.rows.map((row) => row.fields['text_file'])).toEqual(['a.txt', 'link-in.txt', 'link-out.txt']);

    const path = join(dir, 'm.yaml');
    const audio = 'model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000';
    await writeFile(path, `version: 1\ndefaults:\n  txt2audio: { ${audio} }\nsources:\n  - files: "*.txt"\n    type: txt2audio\n    field: text_file\n`);
    expect((await messageOf(path)).replaceAll(`${dir}/`, '').replace(outside, '<outside>')).toBe(
      `m.yaml:5:12 job "link-out" text_file: expected a file inside the manifest's folder, got "link-out.txt" (resolves to <outside>/o.txt); copy the file into that folder, or pass --allow-outside-files if you trust this manifest\n1 problem in m.yaml; nothing was sent.`,
    );
    const loaded = await loadManifest(path, { allowOutsideFiles: true });
    expect(loaded.jobs.map((job) => job.id)).toEqual(['a', 'link-in', 'link-out']);
  });

  test('a brace alternative that leaves the folder is refused, not skipped', async () => {
    const dir = await folderWith({ 'a.txt': 'A.' });
    for (const pattern of ['{*.txt,/etc/*}', 'x/{a,/etc}/*', '{*.txt,../*.txt}', '{a,..}/*.txt']) {
      const read = await readFirst(manifest(`  - files: "${pattern}"\n    type: txt2audio\n    field: text_file\n`), dir);
      expect(read.problems).toEqual([
        `book/manifest.yaml:3:12 files: expected a pattern inside the manifest's folder, got "${pattern}"; a files pattern never leaves the manifest's folder; move the files into it`,
      ]);
    }
  });
});
