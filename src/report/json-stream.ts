/**
 * A JSON document with one long list in it (the jobs), written as text chunks from an iterable of
 * rows: a million jobs are never one object nor one JSON.stringify string. The fields before the
 * list come first, in the order given, so a reader that stops early still has them; the list
 * holds one row a line; the fields after it close the document.
 */

/** Per-job rows: an array today; an async iterable of ledger windows is a drop-in replacement. */
export type Rows<T> = Iterable<T> | AsyncIterable<T>;

type Fields = Readonly<Record<string, unknown>>;

/** Rows in arrays of `size`, each written as one chunk of text: few writes, bounded memory. */
export async function* batches<T>(rows: Rows<T>, size = 1000): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const row of rows) {
    batch.push(row);
    if (batch.length < size) continue;
    yield batch;
    batch = [];
  }
  if (batch.length > 0) yield batch;
}

/**
 * The document as text chunks, its fields in their order, the `jobs` field (whose value is not
 * read) written from `rows`. The concatenation parses to `{ ...document, jobs: rows.map(toJson) }`
 * (an undefined field is left out, as JSON.stringify does).
 */
export async function* jsonListDocument<T>(document: Fields, rows: Rows<T>, toJson: (row: T) => unknown): AsyncGenerator<string> {
  const entries = Object.entries(document);
  const jobsAt = entries.findIndex(([key]) => key === 'jobs');
  const headText = fields(entries.slice(0, jobsAt));
  yield `{\n${headText}${headText === '' ? '' : ',\n'}  "jobs": [`;
  let first = true;
  for await (const batch of batches(rows)) {
    yield `${first ? '\n' : ',\n'}    ${batch.map((row) => JSON.stringify(toJson(row))).join(',\n    ')}`;
    first = false;
  }
  const tailText = fields(entries.slice(jobsAt + 1));
  yield `${first ? ']' : '\n  ]'}${tailText === '' ? '' : `,\n${tailText}`}\n}\n`;
}

/** `  "key": value` lines, pretty-printed as JSON.stringify(…, null, 2) would nest them. */
function fields(entries: [string, unknown][]): string {
  return entries
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `  ${JSON.stringify(key)}: ${JSON.stringify(value, null, 2).replace(/\n/g, '\n  ')}`)
    .join(',\n');
}
