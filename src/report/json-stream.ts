/**
 * A JSON document with one long list in it (the jobs), written as text chunks from an iterable of
 * rows: a million jobs are never one object nor one JSON.stringify string. The fields before the
 * list come first, in the order given, so a reader that stops early still has them; the list
 * holds one row a line; the fields after it close the document.
 */

/** Per-job rows: an array today; an async iterable of ledger windows is a drop-in replacement. */
export type Rows<T> = Iterable<T> | AsyncIterable<T>;

export interface ListDocument<T> {
  /** Fields before the list, in order. */
  head: Readonly<Record<string, unknown>>;
  /** The list's key: `jobs`. */
  listKey: string;
  rows: Rows<T>;
  /** One row as its JSON value. */
  toJson: (row: T) => unknown;
  /** Fields after the list, in order; an undefined value is left out, as JSON.stringify does. */
  tail?: Readonly<Record<string, unknown>> | undefined;
}

/** Chunks are handed on at about this size: few enough writes, little held in memory. */
const CHUNK_CHARS = 64 * 1024;

/** The document as text chunks; their concatenation parses to the same value as the object would. */
export async function* jsonListDocument<T>(document: ListDocument<T>): AsyncGenerator<string> {
  const head = fields(document.head);
  let buffer = `{\n${head}${head === '' ? '' : ',\n'}  ${JSON.stringify(document.listKey)}: [`;
  let first = true;
  for await (const row of document.rows) {
    buffer += `${first ? '\n' : ',\n'}    ${JSON.stringify(document.toJson(row))}`;
    first = false;
    if (buffer.length >= CHUNK_CHARS) {
      yield buffer;
      buffer = '';
    }
  }
  buffer += first ? ']' : '\n  ]';
  const tail = fields(document.tail ?? {});
  yield `${buffer}${tail === '' ? '' : `,\n${tail}`}\n}\n`;
}

/** `  "key": value` lines, pretty-printed as JSON.stringify(…, null, 2) would nest them. */
function fields(record: Readonly<Record<string, unknown>>): string {
  return Object.entries(record)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `  ${JSON.stringify(key)}: ${JSON.stringify(value, null, 2).replace(/\n/g, '\n  ')}`)
    .join(',\n');
}

/** A small document written whole: the same layout, no list. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
