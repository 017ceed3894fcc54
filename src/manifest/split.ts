import type { SplitMode } from './fields.js';
import { countChars } from './content-hash.js';
import { printable } from './errors.js';

/**
 * One part of a text cut at sentences (or paragraphs) for `split:`; `start`/`end` are UTF-16
 * offsets into the text, `chars` code points as the service counts them. The whitespace at a cut
 * belongs to neither part, so the parts with the whitespace between them give back the text.
 */
export interface TextPart {
  text: string;
  start: number;
  end: number;
  chars: number;
}

/** A sentence longer than the limit on its own: its UTF-16 offset, its line and column in code points. */
export interface SplitProblem {
  offset: number;
  line: number;
  col: number;
  chars: number;
  maxChars: number;
  message: string;
  expected: string;
  got: string;
  hint: string;
}

type SplitResult = { ok: true; parts: TextPart[] } | { ok: false; problem: SplitProblem };

type Span = Pick<TextPart, 'start' | 'end'>;

const EXCERPT_CHARS = 40;
// A sentence break after these is almost always wrong ("Dr. Smith", "J. R. R. Tolkien"): the
// segmenter's rules do not know abbreviations, so a cut there would split a name.
const ABBREVIATION_END = /(?:^|[\s(["'“‘])(?:Mr|Mrs|Ms|Mx|Dr|Prof|Rev|St|Mt|Capt|Gen|Col|Lt|Sgt|vs|cf|e\.g|i\.e|[A-Z])\.$/;
// A blank line (spaces allowed on it) or the Unicode paragraph separator ends a paragraph.
const PARAGRAPH_BREAK = /\n[^\S\n]*\n|\u2029/g;

function trimmed(text: string, start: number, end: number): Span | undefined {
  let from = start;
  let to = end;
  while (from < to && /\s/.test(text[from] ?? '')) from++;
  while (to > from && /\s/.test(text[to - 1] ?? '')) to--;
  return from < to ? { start: from, end: to } : undefined;
}

/** The sentences of `text[start, end)`, trimmed, with breaks after abbreviations undone. */
function sentenceSpans(text: string, start: number, end: number, segmenter: Intl.Segmenter): Span[] {
  const spans: Span[] = [];
  let pendingStart: number | undefined;
  for (const { segment, index } of segmenter.segment(text.slice(start, end))) {
    const span = trimmed(text, start + index, start + index + segment.length);
    if (span === undefined) continue;
    const from = pendingStart ?? span.start;
    const joinNext = !/\n\s*$/.test(segment) && ABBREVIATION_END.test(text.slice(span.start, span.end));
    if (joinNext) {
      pendingStart = from;
      continue;
    }
    spans.push({ start: from, end: span.end });
    pendingStart = undefined;
  }
  if (pendingStart !== undefined) {
    const last = trimmed(text, pendingStart, end);
    if (last !== undefined) spans.push(last);
  }
  return spans;
}

/** Paragraphs that fit whole, and the sentences of those that do not. */
function paragraphSpans(text: string, maxChars: number, segmenter: Intl.Segmenter): Span[] {
  const spans: Span[] = [];
  let from = 0;
  const addParagraph = (end: number) => {
    const span = trimmed(text, from, end);
    if (span === undefined) return;
    if (countChars(text.slice(span.start, span.end)) <= maxChars) spans.push(span);
    else spans.push(...sentenceSpans(text, span.start, span.end, segmenter));
  };
  for (const match of text.matchAll(PARAGRAPH_BREAK)) {
    addParagraph(match.index);
    from = match.index + match[0].length;
  }
  addParagraph(text.length);
  return spans;
}

function lineColOf(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, col: countChars(before.slice(lineStart)) + 1 };
}

function overLimit(text: string, span: Span, chars: number, maxChars: number): SplitProblem {
  const { line, col } = lineColOf(text, span.start);
  const sentence = text.slice(span.start, span.end);
  const excerpt = printable(sentence.length > EXCERPT_CHARS ? `${sentence.slice(0, EXCERPT_CHARS - 1)}…` : sentence, EXCERPT_CHARS);
  const expected = `sentences of at most ${maxChars} characters (the model's limit)`;
  const got = `one of ${chars} characters at line ${line}, column ${col} of the text: "${excerpt}"`;
  const hint = 'break that sentence up (a full stop, a question mark or a line break ends one)';
  return { offset: span.start, line, col, chars, maxChars, message: `expected ${expected}, got ${got}`, expected, got, hint };
}

/**
 * Cuts `text` into parts of at most `maxChars` code points, packing whole sentences (or whole
 * paragraphs, one over the limit by its sentences) greedily; a text within the limit is one part.
 */
export function splitText(text: string, mode: SplitMode, maxChars: number, locale?: string): SplitResult {
  if (!Number.isInteger(maxChars) || maxChars < 1) throw new RangeError(`maxChars must be a whole number above 0, got ${maxChars}`);
  const total = countChars(text);
  if (total <= maxChars) return { ok: true, parts: [{ text, start: 0, end: text.length, chars: total }] };
  const segmenter = new Intl.Segmenter(locale, { granularity: 'sentence' });
  const spans = mode === 'paragraphs' ? paragraphSpans(text, maxChars, segmenter) : sentenceSpans(text, 0, text.length, segmenter);
  // Code points up to an offset, counted left to right once: the spans' offsets only grow.
  let offsetSeen = 0;
  let charsSeen = 0;
  const charsTo = (offset: number): number => {
    charsSeen += countChars(text.slice(offsetSeen, offset));
    offsetSeen = offset;
    return charsSeen;
  };
  const parts: TextPart[] = [];
  let current: Packed | undefined;
  for (const span of spans) {
    const startCount = charsTo(span.start);
    const endCount = charsTo(span.end);
    if (endCount - startCount > maxChars) return { ok: false, problem: overLimit(text, span, endCount - startCount, maxChars) };
    if (current !== undefined && endCount - current.startCount <= maxChars) {
      current.end = span.end;
      current.endCount = endCount;
      continue;
    }
    if (current !== undefined) parts.push(partOf(text, current));
    current = { start: span.start, end: span.end, startCount, endCount };
  }
  if (current !== undefined) parts.push(partOf(text, current));
  return { ok: true, parts };
}

/** A part being packed: its span, and the code points before its start and its end. */
type Packed = Span & { startCount: number; endCount: number };

function partOf(text: string, part: Packed): TextPart {
  return { text: text.slice(part.start, part.end), start: part.start, end: part.end, chars: part.endCount - part.startCount };
}

/** `<id>.p001`: 3 digits, more when there are more than 999 parts, so names sort in order. */
export function partId(id: string, n: number, total = n): string {
  const width = Math.max(3, String(total).length);
  return `${id}.p${String(n).padStart(width, '0')}`;
}
