/**
 * What a text or an embedding result becomes on disk. The service gives either in the status's
 * `result` or as a file behind `result_url`, as plain text or JSON; both arrive here as bytes.
 * An error page or document served in their place is refused, never saved as a paid result.
 */
import { open, readFile, stat } from 'node:fs/promises';
import { describeNonMedia, sniffMedia, SNIFF_BYTES, type MediaKind } from '../media-type.js';

/** The files to write, the recorded one last; or why the bytes are no such result. */
export type ResultForms = { files: { extension: string; body: Buffer }[] } | { mismatch: string };

export function resultForms(
  media: 'text' | 'embedding',
  raw: Buffer,
  params: Readonly<Record<string, unknown>>,
): ResultForms {
  const refusal = pageOrMedia(raw);
  const what = media === 'text' ? 'text' : 'an embedding';
  if (refusal !== undefined) return { mismatch: `the result is not ${what}: its bytes are ${refusal}` };
  const text = utf8(raw)?.replace(/^\uFEFF/, '');
  if (text === undefined) return { mismatch: `the result is not ${what}: its bytes are binary data` };
  const parsed = parseJson(text);
  if (media === 'embedding') {
    const vector = vectorOf(parsed);
    if (vector === undefined) {
      return { mismatch: `the result is not an embedding: its bytes are ${described(raw)} with no list of numbers` };
    }
    // One input, one vector, however the service wrapped it.
    const single = typeof params['input'] === 'string' && vector.length === 1 && isVector(vector[0]);
    const embedding = single ? vector[0] : vector;
    const document = { model: params['model'] ?? null, input: params['input'] ?? null, embedding };
    return { files: [{ extension: 'json', body: Buffer.from(`${JSON.stringify(document)}\n`) }] };
  }
  if (parsed === undefined) return { files: [{ extension: 'txt', body: Buffer.from(text) }] };
  if (typeof parsed === 'string') return { files: [{ extension: 'txt', body: Buffer.from(parsed) }] };
  const words = textOf(parsed);
  if (words === undefined) return { mismatch: `the result is not text: its bytes are ${described(raw)} with no text` };
  // Timestamps, segments, speakers: kept whole beside the words.
  const structure = Buffer.from(`${JSON.stringify(parsed, null, 2)}\n`);
  return { files: [{ extension: 'json', body: structure }, { extension: 'txt', body: Buffer.from(words) }] };
}

/** An HTML or XML page, an empty body or a media file: never a text. JSON and other text are read on. */
function pageOrMedia(raw: Buffer): string | undefined {
  const head = raw.subarray(0, SNIFF_BYTES);
  const media = sniffMedia(head);
  if (media !== undefined) return media.name;
  const looks = describeNonMedia(head);
  return looks === undefined || looks === 'a JSON document' || looks === 'plain text' ? undefined : looks;
}

/** The bytes as text, or undefined when they are no UTF-8 text (binary, control characters). */
function utf8(raw: Buffer): string | undefined {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
    return /[\x00-\x08\x0e-\x1f\x7f]/.test(text) ? undefined : text;
  } catch {
    return undefined;
  }
}

const described = (raw: Buffer): string => describeNonMedia(raw.subarray(0, SNIFF_BYTES)) ?? 'text';

/** JSON when the text is a JSON object, list or string; undefined for plain text. */
function parseJson(text: string): unknown {
  if (!/^\s*[[{"]/.test(text)) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const isVector = (value: unknown): value is number[] =>
  Array.isArray(value) && value.length > 0 && value.every((n) => typeof n === 'number' && Number.isFinite(n));

/**
 * The numbers of an embedding, in the shapes services give them: a list, a list per input, or
 * an object holding one (`embedding`, `embeddings`, `data[].embedding`, `result`).
 */
function vectorOf(value: unknown): number[] | number[][] | undefined {
  if (isVector(value)) return value;
  if (Array.isArray(value) && value.length > 0) {
    const vectors = value.map((item) => vectorOf(item));
    return vectors.every(isVector) ? vectors : undefined;
  }
  if (typeof value === 'string') return vectorOf(parseJson(value));
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  return ['embedding', 'embeddings', 'data', 'result'].map((key) => vectorOf(record[key])).find((found) => found);
}

/** A structured text's words: its `text`, else its segments' texts joined (a list is its segments). */
function textOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record['text'] === 'string') return record['text'];
  const listed = Array.isArray(value) ? value : record['segments'];
  const segments = Array.isArray(listed) ? (listed as unknown[]) : undefined;
  const texts = segments?.map((segment) => (segment as { text?: unknown } | null)?.text);
  return texts?.every((t) => typeof t === 'string') ? texts.join(' ').replace(/\s+/g, ' ').trim() : undefined;
}

/** Characters of a text result the review page shows; the whole text is its file, a click away. */
const GLIMPSE_CHARS = 280;
/** An embedding file larger than this is shown by its link alone. */
const MAX_EMBEDDING_BYTES = 8 * 1024 * 1024;

/**
 * What the review page shows of a text or embedding result file: its start, or its size and
 * first values. Undefined for media, or a file no longer readable (the page marks it missing).
 */
export async function resultGlimpse(media: MediaKind, file: string): Promise<string | undefined> {
  if (media !== 'text' && media !== 'embedding') return undefined;
  try {
    if (media === 'text') {
      const handle = await open(file, 'r');
      // Four bytes a character at most in UTF-8.
      const size = GLIMPSE_CHARS * 4;
      const head = await handle.read(Buffer.alloc(size), 0, size, 0).finally(() => handle.close());
      const chars = [...head.buffer.subarray(0, head.bytesRead).toString('utf8')];
      return chars.length > GLIMPSE_CHARS ? `${chars.slice(0, GLIMPSE_CHARS).join('')}…` : chars.join('');
    }
    const { size: bytes } = await stat(file);
    if (bytes > MAX_EMBEDDING_BYTES) return `${bytes} bytes of numbers`;
    const vector = vectorOf(JSON.parse(await readFile(file, 'utf8')) as unknown);
    if (vector === undefined) return undefined;
    const first = (isVector(vector) ? vector : (vector[0] ?? [])).slice(0, 5).join(', ');
    const width = isVector(vector) ? 0 : (vector[0]?.length ?? 0);
    const size = isVector(vector) ? `${vector.length} numbers` : `${vector.length} vectors of ${width} numbers`;
    return `${size}: ${first}, …`;
  } catch {
    return undefined;
  }
}
