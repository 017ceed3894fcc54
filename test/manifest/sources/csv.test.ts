import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { fieldsOf, folderWith, readFirst, removeFolders } from './helpers.js';

afterEach(removeFolders);

const manifest = (entry: string) => `version: 1\nsources:\n${entry}`;
const audio = (file: string, extra = '') => manifest(`  - csv: ${file}\n    type: txt2audio\n${extra}`);

describe('CSV rows', () => {
  test('the header maps columns to fields: through columns:, or by name; the entry adds its fields under each row', async () => {
    const dir = await folderWith({
      'chapters.csv': 'chapter,file,narrator,speed\nch-01,text/one.txt,af_sky,1.25\nch-02,text/two.txt,,\n',
    });
    const read = await readFirst(
      manifest(`  - csv: chapters.csv
    type: txt2audio
    columns: { id: chapter, text_file: file, voice: narrator }
    voice: bf_emma
    tags: [book]
`),
      dir,
    );
    expect(read.problems).toEqual([]);
    expect(fieldsOf(read)).toEqual([
      { type: 'txt2audio', id: 'ch-01', text_file: 'text/one.txt', voice: 'af_sky', speed: 1.25, tags: ['book'] },
      { type: 'txt2audio', id: 'ch-02', text_file: 'text/two.txt', voice: 'bf_emma', tags: ['book'] },
    ]);
    const [first, second] = read.rows;
    expect(first?.ordinal).toBe(0);
    expect(first?.type).toBe('txt2audio');
    expect(first?.at).toEqual({ file: 'book/chapters.csv', line: 2, col: 1 });
    expect(first?.fieldAt('voice')).toEqual({ file: 'book/chapters.csv', line: 2, col: 3 });
    expect(first?.fieldAt('speed')).toEqual({ file: 'book/chapters.csv', line: 2, col: 4 });
    // An empty cell leaves the field to the entry, and its position with it.
    expect(second?.fieldAt('voice')).toEqual({ file: 'book/manifest.yaml', line: 6, col: 12 });
    expect(second?.fieldAt('type')).toEqual({ file: 'book/chapters.csv', line: 3, col: 1 });
  });

  test('a type column decides each row; a row without one, or with a wrong one, is located', async () => {
    const dir = await folderWith({ 'jobs.csv': 'type,prompt,seed\ntxt2img,a red fox,7\n,a blue fox,8\ntxt2imgg,a green fox,9\n' });
    const read = await readFirst(manifest('  - csv: jobs.csv\n'), dir);
    expect(fieldsOf(read)).toEqual([{ type: 'txt2img', prompt: 'a red fox', seed: 7 }]);
    expect(read.problems).toMatchInlineSnapshot(`
      [
        "book/jobs.csv:3:1 type: expected one of "txt2audio", "img2video", "txt2img", "txt2video", "txt2embedding", "vid-upscale", "img-rmbg", "img-upscale", "img2txt", "vid-rmbg", "video-replace", "aud2video", "transcribe", "aud2txt", "vid2txt", "audiofile2txt", "videofile2txt", "txt2music", "img2img", got nothing; give the row a type, or set type: on the source entry",
        "book/jobs.csv:4:1 type: expected one of "txt2audio", "img2video", "txt2img", "txt2video", "txt2embedding", "vid-upscale", "img-rmbg", "img-upscale", "img2txt", "vid-rmbg", "video-replace", "aud2video", "transcribe", "aud2txt", "vid2txt", "audiofile2txt", "videofile2txt", "txt2music", "img2img", got "txt2imgg"; did you mean "txt2img"?",
      ]
    `);
    expect(read.raw.map((p) => p.ordinal)).toEqual([1, 2]);
  });

  test('quoted cells with line breaks: each row is located at the line it starts on, LF or CRLF', async () => {
    for (const newline of ['\n', '\r\n']) {
      const lines = ['id,text,speed', 'a,"one line', 'two lines', 'three",1', '', 'b,"x",fast', 'c,"he said ""hi""",2'];
      const dir = await folderWith({ 'multi.csv': lines.join(newline) + newline });
      const read = await readFirst(audio('multi.csv'), dir);
      expect(read.problems).toEqual([]);
      expect(read.rows.map((row) => [row.fields['id'], row.at.line])).toEqual([
        ['a', 2],
        ['b', 6],
        ['c', 7],
      ]);
      expect(read.rows[0]?.fields['text']).toBe(['one line', 'two lines', 'three'].join(newline));
      expect(read.rows[2]?.fields['text']).toBe('he said "hi"');
      // Left as written for the validator to report at its cell: "expected a number above 0, got "fast"".
      expect(read.rows[1]?.fields['speed']).toBe('fast');
      expect(read.rows[1]?.fieldAt('speed')).toEqual({ file: 'book/multi.csv', line: 6, col: 3 });
    }
  });

  test('a byte order mark and blank rows are skipped; blank lines still count', async () => {
    const dir = await folderWith({ 'bom.csv': '\ufeffid,text\n\na,hello\n,\n  ,\t\nb,there\n' });
    const read = await readFirst(audio('bom.csv'), dir);
    expect(read.problems).toEqual([]);
    expect(read.rows.map((row) => [row.fields['id'], row.at.line, row.ordinal])).toEqual([
      ['a', 3],
      ['b', 6],
    ].map(([id, line], i) => [id, line, i]));
  });

  test('TSV: tabs separate, commas and quotes inside cells are text', async () => {
    const dir = await folderWith({ 'lines.tsv': 'id\ttext\nq1\tWell, she said "no".\n' });
    const read = await readFirst(manifest('  - tsv: lines.tsv\n    type: txt2audio\n'), dir);
    expect(read.problems).toEqual([]);
    expect(fieldsOf(read)).toEqual([{ type: 'txt2audio', id: 'q1', text: 'Well, she said "no".' }]);
  });
});

describe('CSV problems, located and worded', () => {
  test('a column that maps to no field, once at the header, with the way to map it', async () => {
    const dir = await folderWith({ 'c.csv': 'id,txt,narrator\na,hello,x\nb,hi,y\n' });
    const read = await readFirst(audio('c.csv'), dir);
    expect(read.rows).toEqual([]);
    expect(read.problems).toMatchInlineSnapshot(`
      [
        "book/c.csv:1:2 expected a column named like a field of txt2audio or mapped in columns:, got "txt"; map it (columns: { text: txt }) or remove the column",
        "book/c.csv:1:3 expected a column named like a field of txt2audio or mapped in columns:, got "narrator"; map it (columns: { <field>: narrator }) or remove the column",
      ]
    `);
  });

  test('a mapping to a column the file lacks is located in the manifest', async () => {
    const dir = await folderWith({ 'c.csv': 'id,body\na,hello\n' });
    const read = await readFirst(audio('c.csv', '    columns: { text: bdy }\n'), dir);
    expect(read.problems).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:5:22 columns.text: expected a column of book/c.csv, got "bdy"; did you mean "body"?",
        "book/c.csv:1:2 expected a column named like a field of txt2audio or mapped in columns:, got "body"; map it (columns: { <field>: body }) or remove the column",
      ]
    `);
  });

  test('a column named like a field that is mapped from another column', async () => {
    const dir = await folderWith({ 'c.csv': 'id,body,text\na,hello,again\n' });
    const read = await readFirst(audio('c.csv', '    columns: { text: body }\n'), dir);
    expect(read.problems).toMatchInlineSnapshot(`
      [
        "book/c.csv:1:3 expected each column read once, got "text" (text is read from column "body"); remove the column, or map it to another field in columns:",
      ]
    `);
  });

  test('empty and repeated column names', async () => {
    const dir = await folderWith({ 'c.csv': 'id,,text,id\na,b,c,d\n' });
    const read = await readFirst(audio('c.csv'), dir);
    expect(read.problems).toMatchInlineSnapshot(`
      [
        "book/c.csv:1:2 expected a column name, got an empty header cell; name the column or delete it",
        "book/c.csv:1:4 expected each column name once, got "id" again (also column 1); rename one of them",
      ]
    `);
  });

  test('no type column and no type on the entry: once, at the header', async () => {
    const dir = await folderWith({ 'c.csv': 'id,text\na,hello\nb,hi\n' });
    const read = await readFirst(manifest('  - csv: c.csv\n'), dir);
    expect(read.problems).toMatchInlineSnapshot(`
      [
        "book/c.csv:1:1 type: expected a type for every row, got no type column and no type on the entry; add a type column, or type: to the source entry",
      ]
    `);
  });

  test('rows with too many or too few cells', async () => {
    const dir = await folderWith({ 'c.csv': 'id,text,speed\na,Hello, world,1\nb,hi\nc,fine,1\n' });
    const read = await readFirst(audio('c.csv'), dir);
    expect(read.rows.map((row) => row.fields['id'])).toEqual(['c']);
    expect(read.problems).toMatchInlineSnapshot(`
      [
        "book/c.csv:2:4 expected 3 cells (as the header has), got 4; a comma inside a cell splits it: quote such cells ("a, b")",
        "book/c.csv:3:3 expected 3 cells (as the header has), got 2; a comma inside a cell splits it: quote such cells ("a, b")",
      ]
    `);
  });

  test('a quote left open: located where its row starts, and reading stops', async () => {
    const dir = await folderWith({ 'c.csv': 'id,text\na,fine\nb,"never closed\nc,more\n' });
    const read = await readFirst(audio('c.csv'), dir);
    expect(read.rows.map((row) => row.fields['id'])).toEqual(['a']);
    expect(read.problems).toMatchInlineSnapshot(`
      [
        "book/c.csv:3:2 expected a closing quote ("), got the end of the file; a quoted cell starts here and never ends; close it, and double every quote inside it ("")",
      ]
    `);
  });

  test('a row past 4 MB: a quote left open, or too many cells, each told as what it is', async () => {
    const dir = await folderWith({ 'open.csv': `id,text\na,"${'x'.repeat(4200 * 1024)}\n` });
    expect((await readFirst(audio('open.csv'), dir)).problems).toEqual(['book/open.csv:2:2 expected a row of at most 4 MB, got more (is a quote left open?)']);
    // Quoted cells: csv-parse reads them many times faster than plain ones.
    await writeFile(join(dir, 'wide.csv'), `${Array.from({ length: 105 }, () => `"${'x'.repeat(41_000)}"`).join(',')}\n`);
    const wide = (await readFirst(audio('wide.csv'), dir)).problems;
    expect(wide).toHaveLength(1);
    expect(wide[0]).toMatch(/^book\/wide\.csv:1:\d+ expected a row of at most 4 MB, got more, in [\d,]+ cells and counting; no list of jobs has rows this wide: is this the right file, with the right delimiter\?$/);
  });

  test('a header of thousands of stray columns: the first 200 problems made, the rest counted', async () => {
    const dir = await folderWith({ 'c.csv': `text,${Array.from({ length: 5000 }, (_, i) => `c${i}`).join(',')}\nhi\n` });
    const read = await readFirst(audio('c.csv'), dir);
    expect(read.problems).toHaveLength(201);
    expect(read.problems.slice(0, 2)).toEqual([
      'book/c.csv:1:1 expected a header naming fields of a job, got 5,000 problems with its columns; the first 200 are listed; is this the right file, with the right delimiter?',
      'book/c.csv:1:2 expected a column named like a field of txt2audio or mapped in columns:, got "c0"; map it (columns: { <field>: c0 }) or remove the column',
    ]);
    expect(read.problems.at(-1)).toMatch(/^book\/c\.csv:1:201 .*got "c199"/);
  });

  test('quotes inside a cell that does not start with one, or after a closing one, are text', async () => {
    const dir = await folderWith({ 'c.csv': 'id,text\na,"quoted" then not\nb,a 5" screen\n' });
    const read = await readFirst(audio('c.csv'), dir);
    expect(read.problems).toEqual([]);
    expect(read.rows.map((row) => row.fields['text'])).toEqual(['"quoted" then not', 'a 5" screen']);
  });

  test('an empty file, a missing file, a folder, a file outside the folder', async () => {
    const dir = await folderWith({ 'empty.csv': '', 'sub/x.csv': 'id\n' });
    expect((await readFirst(audio('empty.csv'), dir)).problems).toMatchInlineSnapshot(`
      [
        "book/empty.csv:1:1 expected a header row naming the columns, got an empty file",
      ]
    `);
    expect((await readFirst(audio('missing.csv'), dir)).problems).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:3:10 csv: expected an existing file, got "missing.csv" (no such file); paths are relative to the manifest's folder",
      ]
    `);
    expect((await readFirst(audio('sub'), dir)).problems).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:3:10 csv: expected a regular file, got "sub" (a directory)",
      ]
    `);
    const outside = await folderWith({ 'other.csv': 'id,text\na,b\n' });
    const relative = `../${outside.split('/').pop()}/other.csv`;
    const refused = await readFirst(audio(relative), dir);
    const name = outside.split('/').pop() ?? '';
    expect(refused.problems[0]?.replace(outside, '<outside>').replace(name, '<outside>')).toMatchInlineSnapshot(`"book/manifest.yaml:3:10 csv: expected a file inside the manifest's folder, got "../<outside>/other.csv" (resolves to <outside>/other.csv); copy the file into that folder, or pass --allow-outside-files if you trust this manifest"`);
    const allowed = await readFirst(audio(relative), dir, { allowOutside: true });
    expect(allowed.rows.length).toBe(1);
  });
});

describe('cells read as their fields want them', () => {
  test('numbers are plain decimals; booleans true/false; tags JSON or commas; loras JSON; the rest stays text', async () => {
    const rows = [
      'prompt,seed,guidance,width,tags,loras,negative_prompt',
      'a,7,0.5,-3,"book, part one",,0x10',
      'b, 12 ,.5,+4,"[""x"",""y""]","[{""name"":""ink"",""weight"":0.8}]",1e3',
      'c,1e3,0x10,"1,000","[oops","[{oops",007',
      'd,1.5,5s,NaN,,"{""name"":""x""}",true',
    ];
    const dir = await folderWith({ 'img.csv': `${rows.join('\n')}\n` });
    const read = await readFirst(manifest('  - csv: img.csv\n    type: txt2img\n'), dir);
    expect(read.problems).toEqual([]);
    expect(fieldsOf(read)).toEqual([
      { type: 'txt2img', prompt: 'a', seed: 7, guidance: 0.5, width: -3, tags: ['book', 'part one'], negative_prompt: '0x10' },
      { type: 'txt2img', prompt: 'b', seed: 12, guidance: 0.5, width: 4, tags: ['x', 'y'], loras: [{ name: 'ink', weight: 0.8 }], negative_prompt: '1e3' },
      // Left as written: the validator reports "expected a whole number, 0 or more, got "1e3"" at the cell.
      { type: 'txt2img', prompt: 'c', seed: '1e3', guidance: '0x10', width: '1,000', tags: '[oops', loras: '[{oops', negative_prompt: '007' },
      // A whole number field given 1.5 gets the number: the validator says it is not whole.
      { type: 'txt2img', prompt: 'd', seed: 1.5, guidance: '5s', width: 'NaN', loras: { name: 'x' }, negative_prompt: 'true' },
    ]);
  });

  test('a split column; ids from {n} alone', async () => {
    const dir = await folderWith({ 'c.csv': 'text,split\nHello there.,sentences\nBye.,\n' });
    const read = await readFirst(audio('c.csv', '    id: "part-{n}"\n'), dir);
    expect(read.problems).toEqual([]);
    expect(fieldsOf(read)).toEqual([
      { type: 'txt2audio', id: 'part-1', text: 'Hello there.', split: 'sentences' },
      { type: 'txt2audio', id: 'part-2', text: 'Bye.' },
    ]);
  });
});

describe('ids', () => {
  test('an id template over cells and {n}; an id cell of its own wins; a row it cannot name is located', async () => {
    const dir = await folderWith({ 'c.csv': 'voice,text,id\naf_sky,Hello.,\nbf_emma,Hi.,custom\n, ,\n"  ",Bye.,\n' });
    const read = await readFirst(audio('c.csv', '    id: "line-{n}-{voice}"\n'), dir);
    expect(read.rows.map((row) => row.fields['id'])).toEqual(['line-1-af_sky', 'custom']);
    expect(read.problems).toMatchInlineSnapshot(`
      [
        "book/c.csv:5:1 id: expected a value for {voice} (id template "line-{n}-{voice}"), got nothing; give this row voice",
      ]
    `);
  });

  test('a placeholder the source cannot fill is refused once, at the template', async () => {
    const dir = await folderWith({ 'c.csv': 'voice,text\naf_sky,Hello.\n' });
    const read = await readFirst(audio('c.csv', '    id: "line-{voise}"\n'), dir);
    expect(read.rows).toEqual([]);
    expect(read.problems).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:5:9 id: expected placeholders this source fills ({n}, {voice}, {text}), got {voise} in "line-{voise}"; did you mean {voice}?",
      ]
    `);
  });

  test('a template whose id is not a valid one', async () => {
    const dir = await folderWith({ 'c.csv': `text\n${'x'.repeat(130)}\n日本語\n` });
    const read = await readFirst(audio('c.csv', '    id: "{text}"\n'), dir);
    expect(read.problems).toMatchInlineSnapshot(`
      [
        "book/c.csv:2:1 id: expected an id of letters, digits, ".", "_" or "-", at most 128 characters, not "." or "..", got 130 characters (from the id template "{text}"); use shorter values, or {n} instead of a long one",
        "book/c.csv:3:1 id: expected a value with letters or digits for {text}, got "日本語"; use another placeholder",
      ]
    `);
  });
});
