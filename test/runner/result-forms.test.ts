import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resultForms, resultGlimpse } from '../../src/runner/result-forms.js';
import { wavTone } from '../../src/sim/results.js';
import { useWorkspace } from '../helpers/workspace.js';

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');
const files = (forms: ReturnType<typeof resultForms>): [string, string][] =>
  'files' in forms ? forms.files.map((file) => [file.extension, file.body.toString('utf8')]) : [['mismatch', forms.mismatch]];

describe('a text result becomes <id>.txt, with <id>.json beside it when it has structure', () => {
  it('keeps plain text as it came, any language, any characters', () => {
    expect(files(resultForms('text', bytes('Grüße, <b>world</b> & 日本\n'), {}))).toEqual([['txt', 'Grüße, <b>world</b> & 日本\n']]);
  });

  it('writes a transcript with timestamps as its words and, beside them, its whole structure', () => {
    const transcript = { language: 'en', segments: [{ start: 0, end: 1.5, text: ' Hello' }, { start: 1.5, end: 2, text: ' there. ' }] };
    const [json, txt] = files(resultForms('text', bytes(JSON.stringify(transcript)), {}));
    expect(txt).toEqual(['txt', 'Hello there.']);
    expect(json?.[0]).toBe('json');
    expect(JSON.parse(json?.[1] ?? '')).toEqual(transcript);
    expect(files(resultForms('text', bytes('{"text":"OCR page","pages":1}'), {}))[1]).toEqual(['txt', 'OCR page']);
    expect(files(resultForms('text', bytes('[{"start":0,"end":1,"text":"Just"},{"start":1,"end":2,"text":"segments"}]'), {}))[1]).toEqual(['txt', 'Just segments']);
  });

  it.each([
    ['<!DOCTYPE html><html><body>Access Denied</body></html>', 'the result is not text: its bytes are an HTML page'],
    ['<?xml version="1.0"?><Error><Code>AccessDenied</Code></Error>', 'the result is not text: its bytes are an XML or HTML document'],
    ['{"message":"Server Error"}', 'the result is not text: its bytes are a JSON document with no text'],
    ['', 'the result is not text: its bytes are an empty file'],
  ])('refuses %j', (body, reason) => {
    expect(resultForms('text', bytes(body), {})).toEqual({ mismatch: reason });
  });

  it('refuses media given as a text', () => {
    expect(resultForms('text', wavTone(), {})).toEqual({ mismatch: 'the result is not text: its bytes are WAV' });
  });
});

describe('an embedding becomes <id>.json: the model, the input and its numbers', () => {
  const params = { model: 'Bge_M3_FP16', input: 'a fox' };
  const document = (forms: ReturnType<typeof resultForms>): unknown => JSON.parse(files(forms)[0]?.[1] ?? '');

  it.each([
    ['a list', '[0.5,-0.25,1e-3]'],
    ['an object', '{"embedding":[0.5,-0.25,1e-3]}'],
    ['a list of one per input', '[[0.5,-0.25,1e-3]]'],
    ['data items', '{"data":[{"index":0,"embedding":[0.5,-0.25,1e-3]}]}'],
    ['JSON text in a string', '"[0.5,-0.25,0.001]"'],
  ])('reads %s', (_shape, body) => {
    expect(document(resultForms('embedding', bytes(body), params))).toEqual({ model: 'Bge_M3_FP16', input: 'a fox', embedding: [0.5, -0.25, 0.001] });
  });

  it('keeps one vector per input when the input was a list', () => {
    const forms = resultForms('embedding', bytes('[[1,2],[3,4]]'), { model: 'm', input: ['a', 'b'] });
    expect(document(forms)).toEqual({ model: 'm', input: ['a', 'b'], embedding: [[1, 2], [3, 4]] });
  });

  it.each([
    ['<html><head><title>502 Bad Gateway</title></head></html>', 'the result is not an embedding: its bytes are an HTML page'],
    ['{"message":"Server Error"}', 'the result is not an embedding: its bytes are a JSON document with no list of numbers'],
    ['[1, "two"]', 'the result is not an embedding: its bytes are a JSON document with no list of numbers'],
    ['Service Unavailable', 'the result is not an embedding: its bytes are plain text with no list of numbers'],
  ])('refuses %j', (body, reason) => {
    expect(resultForms('embedding', bytes(body), params)).toEqual({ mismatch: reason });
  });
});

describe('what the review page shows of a text or an embedding', () => {
  const workspace = useWorkspace();

  it('a text by its start, an embedding by its size and first values, media by nothing', async () => {
    const text = path.join(workspace.dir, 'a.txt');
    await writeFile(text, 'é'.repeat(300));
    expect(await resultGlimpse('text', text)).toBe(`${'é'.repeat(280)}…`);
    const short = path.join(workspace.dir, 'b.txt');
    await writeFile(short, 'a <short> text');
    expect(await resultGlimpse('text', short)).toBe('a <short> text');
    const embedding = path.join(workspace.dir, 'c.json');
    await writeFile(embedding, JSON.stringify({ model: 'm', input: 'x', embedding: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7] }));
    expect(await resultGlimpse('embedding', embedding)).toBe('7 numbers: 0.1, 0.2, 0.3, 0.4, 0.5, …');
    expect(await resultGlimpse('embedding', path.join(workspace.dir, 'gone.json'))).toBeUndefined();
    expect(await resultGlimpse('audio', text)).toBeUndefined();
  });
});
