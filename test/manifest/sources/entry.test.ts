import * as z from 'zod';
import { describe, expect, test } from 'vitest';
import { formatIssue } from '../../../src/manifest/errors.js';
import { sourceEntrySchema } from '../../../src/manifest/schema.js';
import { parseSourceEntry } from '../../../src/manifest/sources/entry.js';
import { firstEntry, MANIFEST } from './helpers.js';

function problemsOf(entryYaml: string): string[] {
  const { raw, locate } = firstEntry(`version: 1\nsources:\n${entryYaml}`);
  return parseSourceEntry(raw, { manifestFile: MANIFEST, locate }).problems.map(formatIssue);
}

describe('a source entry is checked once, every problem located in the manifest', () => {
  test('a valid entry of each kind gives its parts', () => {
    const { raw, locate } = firstEntry('sources:\n  - csv: c.csv\n    type: txt2audio\n    columns: { text: body }\n    id: "c-{n}"\n    voice: af_sky\n    tags: [a]\n');
    const parsed = parseSourceEntry(raw, { manifestFile: MANIFEST, locate });
    expect(parsed.problems).toEqual([]);
    expect(parsed.entry).toMatchObject({ kind: 'csv', file: 'c.csv', type: 'txt2audio', columns: { text: 'body' }, fields: { voice: 'af_sky', tags: ['a'] } });
    expect(parsed.entry?.idTemplate?.text).toBe('c-{n}');
  });

  test('not a source, two sources, a typo in the source key', () => {
    expect(problemsOf('  - just text\n')).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:3:5 expected a source entry: a mapping with one of csv, tsv, jsonl, files or matrix, got "just text"",
      ]
    `);
    expect(problemsOf('  - csv: a.csv\n    files: "*.txt"\n')).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:4:12 expected one source per entry, got both csv and files; make them two entries",
      ]
    `);
    expect(problemsOf('  - cvs: a.csv\n    type: txt2audio\n')).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:3:5 expected a source entry with one of csv, tsv, jsonl, files or matrix, got none of them; did you mean csv instead of cvs?",
      ]
    `);
  });

  test('unknown keys, fields of another kind, values a field cannot take, a bad type and template', () => {
    expect(
      problemsOf(`  - csv: ""
    type: txt2audio
    voise: x
    seed: 7
    speed: fast
    columns: { text: 3, colour: c }
    id: "x-{a"
`),
    ).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:9:9 id: expected an id template with placeholders like {stem} (letters, digits and _ inside braces), got "x-{a"; every { needs its }",
        "book/manifest.yaml:5:5 voise: unknown field; did you mean "voice"?",
        "book/manifest.yaml:6:5 seed: unknown field; seed is a field of img2video, txt2img, txt2video, video-replace, aud2video, txt2music, img2img jobs, not txt2audio",
        "book/manifest.yaml:7:12 speed: expected a number above 0, got "fast"",
        "book/manifest.yaml:3:10 csv: expected a path to a CSV file, got """,
        "book/manifest.yaml:8:22 columns.text: expected a column name, got 3",
        "book/manifest.yaml:8:25 columns.colour: unknown field; allowed here: id, type, tags, split, text, text_file, ref_audio, model, mode, voice, lang, speed, format, sample_rate, ref_text, instruct",
      ]
    `);
    expect(problemsOf('  - jsonl: a.jsonl\n    type: txt2vid\n    columns: [a]\n')).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:4:11 type: expected one of "txt2audio", "img2video", "txt2img", "txt2video", "txt2embedding", "vid-upscale", "img-rmbg", "img-upscale", "img2txt", "vid-rmbg", "video-replace", "aud2video", "transcribe", "aud2txt", "vid2txt", "audiofile2txt", "videofile2txt", "txt2music", "img2img", got "txt2vid"",
        "book/manifest.yaml:5:14 columns: expected a mapping of field: key, got ["a"]",
      ]
    `);
    expect(problemsOf('  - csv: a.csv\n    type: txt2audio\n    id: chapter\n')).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:5:9 id: expected an id template with a placeholder (each row needs an id of its own), got "chapter"; to take ids from a column, map it: columns: { id: chapter }",
      ]
    `);
    expect(problemsOf('  - files: "*.txt"\n    type: txt2audio\n    field: text_file\n    id: intro\n')).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:6:9 id: expected an id template with a placeholder (each row needs an id of its own), got "intro"; add a placeholder such as {n}",
      ]
    `);
    expect(problemsOf('  - tsv: a.tsv\n    id: "{stem.size}"\n')).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:4:9 id: expected placeholders {name}, {name.index} or {name.stem}, got {stem.size} in "{stem.size}"",
      ]
    `);
  });

  test('files: a type, a field that names a file, nothing given twice', () => {
    expect(problemsOf('  - files: "*.txt"\n')).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:3:5 type: expected one of "txt2audio", "img2video", "txt2img", "txt2video", "txt2embedding", "vid-upscale", "img-rmbg", "img-upscale", "img2txt", "vid-rmbg", "video-replace", "aud2video", "transcribe", "aud2txt", "vid2txt", "audiofile2txt", "videofile2txt", "txt2music", "img2img" (each file becomes a job of that type), got nothing",
        "book/manifest.yaml:3:5 field: expected the field each file fills, got nothing",
      ]
    `);
    expect(problemsOf('  - files: "*.txt"\n    type: txt2audio\n    field: text\n')).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:5:12 field: expected a field that names a file: text_file, ref_audio, got "text"",
      ]
    `);
    expect(problemsOf('  - files: "*.txt"\n    type: txt2img\n    field: prompt\n')).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:5:12 field: expected a field that names a file (txt2img jobs name none), got "prompt"",
      ]
    `);
    expect(problemsOf('  - files: "*.png"\n    type: img2video\n    field: first_frame_image\n    first_frame_image: a.png\n')).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:6:5 first_frame_image: expected first_frame_image only from the files, got it on the entry as well; remove first_frame_image: the files fill it",
      ]
    `);
  });

  test('matrix: lists of values, known fields, a type somewhere, a bounded size', () => {
    expect(problemsOf('  - matrix: [a, b]\n    type: txt2img\n')).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:3:13 matrix: expected a mapping of field: [values…], got ["a","b"]",
      ]
    `);
    expect(problemsOf('  - matrix:\n      prompt: []\n      seed: [1, -2]\n      id: [a]\n      voice: [x]\n    type: txt2img\n    seed: 4\n')).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:4:15 matrix.prompt: expected a list of at least one value, got []",
        "book/manifest.yaml:9:5 seed: expected seed once (it is a list of the matrix), got it on the entry as well; remove one of them",
        "book/manifest.yaml:5:17 seed: expected a whole number, 0 or more, got -2",
        "book/manifest.yaml:6:7 matrix.id: unknown field; ids come from the entry's id template, e.g. id: "promo-{prompt.index}"",
        "book/manifest.yaml:7:7 matrix.voice: unknown field; voice is a field of txt2audio jobs, not txt2img",
      ]
    `);
    expect(problemsOf('  - matrix:\n      prompt: [a]\n')).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:3:5 type: expected one of "txt2audio", "img2video", "txt2img", "txt2video", "txt2embedding", "vid-upscale", "img-rmbg", "img-upscale", "img2txt", "vid-rmbg", "video-replace", "aud2video", "transcribe", "aud2txt", "vid2txt", "audiofile2txt", "videofile2txt", "txt2music", "img2img", on the entry or as a list of the matrix, got nothing",
      ]
    `);
    const values = `[${Array.from({ length: 400 }, (_, i) => i).join(', ')}]`;
    expect(problemsOf(`  - matrix:\n      seed: ${values}\n      steps: ${values}\n      width: ${values}\n    type: txt2img\n`)).toMatchInlineSnapshot(`
      [
        "book/manifest.yaml:5:15 steps: expected a whole number above 0, got 0",
        "book/manifest.yaml:6:15 width: expected a whole number above 0, got 0",
        "book/manifest.yaml:4:7 matrix: expected at most 10,000,000 combinations, got 64,000,000",
      ]
    `);
  });
});

describe('the entry schema (for the manifest JSON Schema)', () => {
  const schema = sourceEntrySchema();

  test('takes each kind of entry with job fields, and refuses unknown keys', () => {
    expect(schema.safeParse({ csv: 'a.csv', type: 'txt2audio', columns: { text: 'body' }, voice: 'x', tags: ['a'] }).success).toBe(true);
    expect(schema.safeParse({ files: 'a/*.txt', type: 'txt2audio', field: 'text_file', id: '{stem}' }).success).toBe(true);
    expect(schema.safeParse({ matrix: { prompt: ['a', 'b'] }, type: 'txt2img', seed: 3 }).success).toBe(true);
    expect(schema.safeParse({ csv: 'a.csv', colour: 'red' }).success).toBe(false);
    expect(schema.safeParse({ files: 'a/*.txt', field: 'text_file' }).success).toBe(false);
    expect(schema.safeParse({ matrix: { prompt: [] }, type: 'txt2img' }).success).toBe(false);
  });

  test('converts to JSON Schema with one branch per kind', () => {
    const json = z.toJSONSchema(schema, { target: 'draft-7' }) as { anyOf: { required: string[]; additionalProperties: boolean }[] };
    expect(json.anyOf.map((branch) => branch.required)).toEqual([['csv'], ['tsv'], ['jsonl'], ['files', 'type', 'field'], ['matrix']]);
    expect(json.anyOf.every((branch) => branch.additionalProperties === false)).toBe(true);
  });
});

describe("names of Object's own properties are unknown fields like any other", () => {
  test.each(['constructor', 'toString', 'hasOwnProperty', '__proto__'])('%s on the entry, as a matrix list and in columns:', (name) => {
    const entry = `  - csv: c.csv\n    type: txt2audio\n    ${name}: 1\n    columns: { ${name}: c }\n`;
    expect(problemsOf(entry)).toEqual([
      `book/manifest.yaml:5:5 ${name}: unknown field; allowed here: csv, type, columns, id, tags, split, text, text_file, ref_audio, model, mode, voice, lang, speed, format, sample_rate, ref_text, instruct`,
      `book/manifest.yaml:6:16 columns.${name}: unknown field; allowed here: id, type, tags, split, text, text_file, ref_audio, model, mode, voice, lang, speed, format, sample_rate, ref_text, instruct`,
    ]);
    expect(problemsOf(`  - matrix:\n      ${name}: [1]\n    type: txt2audio\n`)).toEqual([
      `book/manifest.yaml:4:7 matrix.${name}: unknown field; allowed here: id, type, tags, split, text, text_file, ref_audio, model, mode, voice, lang, speed, format, sample_rate, ref_text, instruct`,
    ]);
  });
});
