import { Readable } from 'node:stream';
import { afterEach, describe, expect, test } from 'vitest';
import { fileScope } from '../../../src/manifest/files.js';
import { parseSourceEntry } from '../../../src/manifest/sources/entry.js';
import { fieldsOf, firstEntry, folderWith, MANIFEST, readFirst, readSource, removeFolders } from './helpers.js';

afterEach(removeFolders);

const manifest = (entry: string) => `version: 1\nsources:\n${entry}`;

describe('JSON Lines rows', () => {
  test('one object a line: keys are fields, typed as JSON types them; blank lines skipped; null means not given', async () => {
    const lines = [
      '\ufeff{"type":"txt2img","prompt":"a fox","seed":7,"loras":[{"name":"ink","weight":0.5}]}',
      '',
      '   ',
      '{"type":"txt2audio","body":"Hello.","voice":null,"tags":["a"]}',
    ];
    const dir = await folderWith({ 'jobs.jsonl': `${lines.join('\r\n')}\r\n` });
    const read = await readFirst(manifest('  - jsonl: jobs.jsonl\n    columns: { text: body }\n    voice: af_sky\n'), dir);
    expect(read.problems).toEqual([]);
    expect(fieldsOf(read)).toEqual([
      { type: 'txt2img', prompt: 'a fox', seed: 7, loras: [{ name: 'ink', weight: 0.5 }], voice: 'af_sky' },
      { type: 'txt2audio', text: 'Hello.', voice: 'af_sky', tags: ['a'] },
    ]);
    const [first, second] = read.rows;
    expect(first?.at).toEqual({ file: 'book/jobs.jsonl', line: 1, col: 1 });
    expect(second?.at).toEqual({ file: 'book/jobs.jsonl', line: 4, col: 1 });
    // A field's own value is found in the line; a mapped one by its key; the entry's in the manifest.
    expect(first?.fieldAt('seed')).toEqual({ file: 'book/jobs.jsonl', line: 1, col: 43 });
    expect(second?.fieldAt('text')).toEqual({ file: 'book/jobs.jsonl', line: 4, col: 28 });
    expect(second?.fieldAt('voice')).toEqual({ file: 'book/manifest.yaml', line: 5, col: 12 });
    expect(second?.ordinal).toBe(1);
  });

  test('keys no field has are passed on, for validation to report as unknown fields', async () => {
    const dir = await folderWith({ 'jobs.jsonl': '{"type":"txt2audio","text":"Hi.","voise":"x"}\n' });
    const read = await readFirst(manifest('  - jsonl: jobs.jsonl\n'), dir);
    expect(fieldsOf(read)).toEqual([{ type: 'txt2audio', text: 'Hi.', voise: 'x' }]);
    expect(read.rows[0]?.fieldAt('voise')).toEqual({ file: 'book/jobs.jsonl', line: 1, col: 42 });
  });

  test('reads a stream instead of the file when given one (stdin)', async () => {
    const dir = await folderWith({});
    const input = Readable.from(['{"type":"txt2audio",', '"text":"One."}\n{"type":"txt2audio","text":"Two."}']);
    const read = await readFirst(manifest('  - jsonl: "-"\n    id: "s-{n}"\n'), dir, { input });
    expect(read.problems).toEqual([]);
    expect(fieldsOf(read)).toEqual([
      { type: 'txt2audio', text: 'One.', id: 's-1' },
      { type: 'txt2audio', text: 'Two.', id: 's-2' },
    ]);
    expect(read.rows[1]?.at).toEqual({ file: 'book/-', line: 2, col: 1 });
  });

  test('lines that are not JSON objects, rows without a type, a key read twice: each located, the rest read', async () => {
    const lines = [
      '{"type":"txt2audio","body":"fine"}',
      '{"type":"txt2audio","body":}',
      '{"type":"txt2audio","body":"x",}',
      '[1,2]',
      '"just text"',
      'not json at all',
      '{"body":"no type"}',
      '{"type":"txt2audo","body":"typo"}',
      '{"type":"txt2audio","body":"a","text":"b"}',
      '{"type":"txt2audio","body":"also fine"}',
    ];
    const dir = await folderWith({ 'bad.jsonl': `${lines.join('\n')}\n` });
    const read = await readFirst(manifest('  - jsonl: bad.jsonl\n    columns: { text: body }\n'), dir);
    expect(read.rows.map((row) => [row.ordinal, row.at.line])).toEqual([
      [0, 1],
      [9, 10],
    ]);
    expect(read.problems).toMatchInlineSnapshot(`
      [
        "book/bad.jsonl:2:1 expected a JSON object (one job a line), got not JSON (unexpected })",
        "book/bad.jsonl:3:32 expected a JSON object (one job a line), got not JSON (Expected double-quoted property name)",
        "book/bad.jsonl:4:1 expected a JSON object (one job a line), got [1,2]",
        "book/bad.jsonl:5:1 expected a JSON object (one job a line), got "just text"",
        "book/bad.jsonl:6:1 expected a JSON object (one job a line), got not JSON (unexpected o)",
        "book/bad.jsonl:7:1 type: expected one of "txt2audio", "img2video", "txt2img", "txt2video", "txt2embedding", "vid-upscale", "img-rmbg", "img-upscale", "img2txt", "vid-rmbg", "video-replace", "aud2video", "transcribe", "aud2txt", "vid2txt", "audiofile2txt", "videofile2txt", "txt2music", "img2img", got nothing; give the row a type, or set type: on the source entry",
        "book/bad.jsonl:8:9 type: expected one of "txt2audio", "img2video", "txt2img", "txt2video", "txt2embedding", "vid-upscale", "img-rmbg", "img-upscale", "img2txt", "vid-rmbg", "video-replace", "aud2video", "transcribe", "aud2txt", "vid2txt", "audiofile2txt", "videofile2txt", "txt2music", "img2img", got "txt2audo"; did you mean "txt2audio"?",
        "book/bad.jsonl:9:39 text: expected each key read once, got "text" (text is read from key "body"); remove text, or map it to another field in columns:",
      ]
    `);
  });
});

test('a __proto__ key is refused, not assigned', async () => {
  const dir = await folderWith({ 'p.jsonl': '{"type":"txt2audio","text":"Hi.","__proto__":{"voice":"x"}}\n' });
  const read = await readFirst(manifest('  - jsonl: p.jsonl\n'), dir);
  expect(read.rows).toEqual([]);
  expect(read.problems).toEqual(['book/p.jsonl:1:1 __proto__: unknown field']);
});

test('lines are read as they come, and a line with no end in sight is refused rather than held', async () => {
  const dir = await folderWith({});
  let produced = 0;
  const unending = new Readable({
    read() {
      this.push(`{"type":"txt2audio","text":"line ${produced}"}\n`);
      produced += 1;
    },
  });
  const { raw, locate } = firstEntry(manifest('  - jsonl: "-"\n'));
  const entry = parseSourceEntry(raw, { manifestFile: MANIFEST, locate }).entry;
  if (entry === undefined) throw new Error('valid entry expected');
  const rows = readSource(entry, { manifestFile: MANIFEST, manifestDir: dir, scope: await fileScope(dir, false), locate, input: unending });
  expect((await rows.next()).value?.row?.fields['text']).toBe('line 0');
  await rows.return(undefined);
  expect(unending.destroyed).toBe(true);

  // Its size is the cause given, however long it goes on; the lines after it are read.
  const huge = Readable.from(['{"type":"txt2audio","text":"ok"}\n{"text":"', ...Array.from({ length: 50 }, () => 'x'.repeat(1024 * 1024)), '"}\n{"type":"txt2audio","text":"after"}\n']);
  const read = await readFirst(manifest('  - jsonl: "-"\n'), dir, { input: huge });
  expect(read.rows.map((row) => row.fields['text'])).toEqual(['ok', 'after']);
  expect(read.problems).toEqual(["book/-:2:1 expected a line of at most 4 MB, got 50.0 MB; one JSON object a line; a job's text is at most 1 MB"]);
  const endless = Readable.from(['{"text":"', 'x'.repeat(5 * 1024 * 1024)]);
  expect((await readFirst(manifest('  - jsonl: "-"\n'), dir, { input: endless })).problems).toEqual([
    "book/-:1:1 expected a line of at most 4 MB, got 5.0 MB; one JSON object a line; a job's text is at most 1 MB",
  ]);
});
