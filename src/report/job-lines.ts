import { batches, type Rows } from './json-stream.js';
import { statusJobJson } from './status-document.js';
import type { StatusJob } from './status.js';

/** `status --format ids`: one job id a line, what `run --only` (and xargs) take back. */
export function idLines(rows: Rows<StatusJob>): AsyncGenerator<string> {
  return lines(rows, (job) => job.id);
}

/** `status --format jsonl`: one job a line, the very object the status document lists. */
export function jsonLines(rows: Rows<StatusJob>): AsyncGenerator<string> {
  return lines(rows, (job) => JSON.stringify(statusJobJson(job)));
}

async function* lines<T>(rows: Rows<T>, line: (row: T) => string): AsyncGenerator<string> {
  for await (const batch of batches(rows)) yield batch.map((row) => `${line(row)}\n`).join('');
}
