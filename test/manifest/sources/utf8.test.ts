import { Readable } from 'node:stream';
import { afterEach, describe, expect, test } from 'vitest';
import { fieldsOf, folderWith, readFirst, removeFolders } from './helpers.js';

afterEach(removeFolders);

const manifest = (entry: string) => `version: 1\nsources:\n${entry}`;
const NOT_UTF8 = 'expected UTF-8 text, got not valid UTF-8; save the file as UTF-8';
const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))));

describe('bytes that are not UTF-8 are refused where they are, as in a text file', () => {
  test('CSV: in a cell, located at its row and cell; in the header, and reading stops', async () => {
    const dir = await folderWith({
      'rows.csv': bytes('id,text\na,fine\nb,caf', [0xe9], ' au lait\nc,"two\nlines ', [0xff], '"\nd,fine\n'),
      'fffd.csv': 'id,text\na,U+FFFD written as such: \uFFFD\n',
      'head.csv': bytes('id,te', [0xc3, 0x28], 'xt\na,hello\n'),
    });
    const rows = await readFirst(manifest('  - csv: rows.csv\n    type: txt2audio\n'), dir);
    expect(rows.problems).toEqual([`book/rows.csv:3:2 ${NOT_UTF8}`, `book/rows.csv:4:2 ${NOT_UTF8}`]);
    expect(fieldsOf(rows).map((fields) => fields['id'])).toEqual(['a', 'd']);
    const fffd = await readFirst(manifest('  - csv: fffd.csv\n    type: txt2audio\n'), dir);
    expect(fffd.problems).toEqual([]);
    const head = await readFirst(manifest('  - tsv: head.csv\n    type: txt2audio\n'), dir);
    expect(head.problems).toEqual([`book/head.csv:1:1 ${NOT_UTF8}`]);
  });

  test('JSON Lines: located at the line and where the bytes are in it; a character a chunk cuts in two is whole', async () => {
    const dir = await folderWith({ 'jobs.jsonl': bytes('{"type":"txt2audio","text":"ok"}\n{"type":"txt2audio","text":"bad ', [0x80], '"}\n') });
    const read = await readFirst(manifest('  - jsonl: jobs.jsonl\n'), dir);
    expect(read.problems).toEqual([`book/jobs.jsonl:2:33 ${NOT_UTF8}`]);
    expect(read.rows).toHaveLength(1);
    // A stream (stdin) whose chunks split "é" (C3 A9) is fine; one that ends inside a character is not.
    const split = Readable.from([bytes('{"type":"txt2audio","text":"caf', [0xc3]), bytes([0xa9], '"}\n')]);
    const whole = await readFirst(manifest('  - jsonl: "-"\n'), dir, { input: split });
    expect(whole.problems).toEqual([]);
    expect(fieldsOf(whole)).toEqual([{ type: 'txt2audio', text: 'café' }]);
    const cut = Readable.from([bytes('{"type":"txt2audio","text":"ok"}\n{"type":"txt2audio","text":"caf', [0xc3])]);
    expect((await readFirst(manifest('  - jsonl: "-"\n'), dir, { input: cut })).problems).toEqual([`book/-:2:32 ${NOT_UTF8}`]);
  });
});
