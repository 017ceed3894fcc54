import { describe, expect, test } from 'vitest';
import { countChars } from '../../src/manifest/content-hash.js';
import { partId, splitText, type TextPart } from '../../src/manifest/split.js';

function partsOf(text: string, mode: 'sentences' | 'paragraphs', maxChars: number): TextPart[] {
  const result = splitText(text, mode, maxChars);
  if (!result.ok) throw new Error(result.problem.message);
  return result.parts;
}

/** Every part within the limit, and the text given back by the parts and the whitespace between them. */
function expectWhole(text: string, parts: readonly TextPart[], maxChars: number): void {
  for (const part of parts) {
    expect(part.chars).toBe(countChars(part.text));
    expect(part.chars).toBeLessThanOrEqual(maxChars);
    expect(text.slice(part.start, part.end)).toBe(part.text);
    expect(part.text).toBe(part.text.trim());
  }
  parts.slice(1).forEach((part, i) => expect(text.slice(parts[i]?.end, part.start)).toMatch(/^\s*$/));
  const rebuilt = parts.map((part, i) => part.text + (i + 1 < parts.length ? text.slice(part.end, parts[i + 1]?.start) : '')).join('');
  expect(rebuilt).toBe(text.trim());
}

describe('splitText', () => {
  test('a text within the limit is one part, exactly as it was (whitespace and all)', () => {
    const text = '  Short enough.  \n';
    expect(partsOf(text, 'sentences', 100)).toEqual([{ text, start: 0, end: text.length, chars: text.length }]);
    expect(partsOf('1234567890', 'sentences', 10)).toHaveLength(1);
  });

  test('whole sentences packed greedily up to the limit, the whitespace at each cut dropped', () => {
    const text = 'One two three. Four five six seven. Eight. Nine ten eleven twelve thirteen.';
    const parts = partsOf(text, 'sentences', 36);
    expect(parts.map((part) => part.text)).toEqual(['One two three. Four five six seven.', 'Eight.', 'Nine ten eleven twelve thirteen.']);
    expectWhole(text, parts, 36);
    // A limit that exactly fits two sentences with the space between them.
    expect(partsOf(text, 'sentences', 35).map((part) => part.text)[0]).toBe('One two three. Four five six seven.');
    expect(partsOf(text, 'sentences', 34).map((part) => part.text)[0]).toBe('One two three.');
  });

  test('lengths are code points: an emoji counts once, as the service counts it', () => {
    const text = '😀😀😀😀. 😀😀😀😀. 😀😀.';
    const parts = partsOf(text, 'sentences', 11);
    expect(parts.map((part) => [part.text, part.chars])).toEqual([
      ['😀😀😀😀. 😀😀😀😀.', 11],
      ['😀😀.', 3],
    ]);
    expectWhole(text, parts, 11);
  });

  test('no cut after a title or an initial: "Dr. Smith", "J. R. R. Tolkien"', () => {
    const text = 'I met Dr. Smith today. Mr. J. R. R. Tolkien wrote it. The end came.';
    const parts = partsOf(text, 'sentences', 40);
    expect(parts.map((part) => part.text)).toEqual(['I met Dr. Smith today.', 'Mr. J. R. R. Tolkien wrote it.', 'The end came.']);
    expectWhole(text, parts, 40);
  });

  test('CJK text: sentences end at 。！？ without spaces', () => {
    const text = '今日は晴れです。明日は雨でしょう！本当ですか？はい、本当です。';
    const parts = partsOf(text, 'sentences', 17);
    expect(parts.map((part) => part.text)).toEqual(['今日は晴れです。明日は雨でしょう！', '本当ですか？はい、本当です。']);
    expectWhole(text, parts, 17);
  });

  test('paragraphs packed whole; a paragraph over the limit by its sentences; CRLF blank lines', () => {
    const text = 'First para, short.\r\n\r\nSecond para is longer. It has two sentences.\r\n  \r\nThird.';
    const parts = partsOf(text, 'paragraphs', 30);
    expect(parts.map((part) => part.text)).toEqual(['First para, short.', 'Second para is longer.', 'It has two sentences.', 'Third.']);
    expectWhole(text, parts, 30);
    // Paragraphs that fit share a part, the blank line between them kept inside it.
    expect(partsOf(text, 'paragraphs', 34).map((part) => part.text)).toEqual(['First para, short.', 'Second para is longer.', 'It has two sentences.\r\n  \r\nThird.']);
    const roomy = partsOf(text, 'paragraphs', 70);
    expect(roomy.map((part) => part.text)).toEqual(['First para, short.\r\n\r\nSecond para is longer. It has two sentences.', 'Third.']);
    // In sentence mode the same text packs by sentences, across paragraphs.
    expect(partsOf(text, 'sentences', 45).map((part) => part.text)).toEqual([
      'First para, short.\r\n\r\nSecond para is longer.',
      'It has two sentences.\r\n  \r\nThird.',
    ]);
  });

  test('a line break ends a sentence: lines without punctuation are cut between lines, never inside a word', () => {
    const text = 'a line of a poem\nanother line here\nand a third one\n';
    const parts = partsOf(text, 'sentences', 35);
    expect(parts.map((part) => part.text)).toEqual(['a line of a poem\nanother line here', 'and a third one']);
    expectWhole(text, parts, 35);
  });

  test('a single sentence over the limit: where it starts, how long it is', () => {
    const text = 'Fine.\nAlso fine. This one sentence is much too long for the limit given.';
    const result = splitText(text, 'sentences', 20);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem).toMatchObject({ offset: 17, line: 2, col: 12, chars: 55, maxChars: 20 });
    expect(result.problem.message).toMatchInlineSnapshot(`"expected sentences of at most 20 characters (the model's limit), got one of 55 characters at line 2, column 12 of the text: "This one sentence is much too long for …""`);
    expect(result.problem.hint).toMatchInlineSnapshot(`"break that sentence up (a full stop, a question mark or a line break ends one)"`);
  });

  test('part ids: three digits, more when there are more than 999 parts', () => {
    expect(partId('ch-01', 1)).toBe('ch-01.p001');
    expect(partId('ch-01', 42, 120)).toBe('ch-01.p042');
    expect(partId('ch-01', 7, 1200)).toBe('ch-01.p0007');
    expect(partId('ch-01', 1000)).toBe('ch-01.p1000');
  });
});
