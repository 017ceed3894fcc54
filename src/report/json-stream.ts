/**
 * A JSON document with one long list in it (the jobs), written as text chunks from an iterable of
 * rows: a million jobs are never one object nor one JSON.stringify string. The fields before the
 * list come first, in the order given, so a reader that stops early still has them; the list
 * holds one row a line; the fields after it close the document.
 */

/** Per-job rows: an array today; an async iterable of ledger windows is a drop-in replacement. */
export type Rows<T> = Iterable<T> | AsyncIterable<T>;

type Fields = Readonly<Record<string, unknown>>;

/** Chunks are handed on at about this size: few enough writes, little held in memory. */
const CHUNK_CHARS = 64 * 1024;

/**
 * The document as text chunks; their concatenation parses to the same value as the object
 * `{ ...head, jobs: rows.map(toJson), ...tail }` would (an undefined field is left out, as
 * JSON.stringify does).
 */
export async function* jsonListDocument<T>(
  head: Fields,
  rows: Rows<T>,
  toJson: (row: T) => unknown,
  tail: Fields = {},
): AsyncGenerator<string> {
  const headText = fields(head);
  let buffer = `{\n${headText}${headText === '' ? '' : ',\n'}  "jobs": [`;
  let first = true;
  for await (const row of rows) {
    buffer += `${first ? '\n' : ',\n'}    ${JSON.stringify(toJson(row))}`;
    first = false;
    if (buffer.length >= CHUNK_CHARS) {
      yield buffer;
      buffer = '';
    }
  }
  buffer += first ? ']' : '\n  ]';
  const tailText = fields(tail);
  yield `${buffer}${tailText === '' ? '' : `,\n${tailText}`}\n}\n`;
}

/** `  "key": value` lines, pretty-printed as JSON.stringify(…, null, 2) would nest them. */
function fields(record: Fields): string {
  return Object.entries(record)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `  ${JSON.stringify(key)}: ${JSON.stringify(value, null, 2).replace(/\n/g, '\n  ')}`)
    .join(',\n');
}
