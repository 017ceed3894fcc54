import { stringify } from 'csv-stringify/sync';
import { decimalUsd, type MicroUsd } from '../money.js';

/** One job per row, for both the cost report and the run summary (unknown cells are empty). */
export interface JobCsvRow {
  id: string;
  type: string;
  model: string;
  state: string;
  /** Written in dollars, exactly (`0.000077`), never with an exponent. */
  price_usd: MicroUsd | null;
  price_source: string;
  request_id: string;
  output: string;
  error: string;
}

export const JOB_CSV_COLUMNS = [
  'id',
  'type',
  'model',
  'state',
  'price_usd',
  'price_source',
  'request_id',
  'output',
  'error',
] as const satisfies readonly (keyof JobCsvRow)[];

/** What a spreadsheet takes for the start of a formula (or, tab and CR, slips past a check for one). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A text cell a spreadsheet would run as a formula (`=HYPERLINK(…)`, `=cmd|…` in an error reason
 * the service wrote) gets a leading `'`, which makes it plain text when opened.
 */
export function neutralise(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** RFC 4180 CSV with a header; commas, quotes and newlines in cells (error texts) are quoted. */
export function jobsCsv(rows: readonly JobCsvRow[], header = true): string {
  // price_usd is the only number: micro-dollars written as exact dollars. A null is an empty cell.
  return stringify([...rows], { header, columns: [...JOB_CSV_COLUMNS], cast: { number: decimalUsd, string: neutralise } });
}

/** The same CSV, written as the rows are read: a header, then a few hundred rows a chunk. */
export async function* jobsCsvChunks(rows: AsyncIterable<JobCsvRow>): AsyncGenerator<string> {
  let batch: JobCsvRow[] = [];
  let header = true;
  for await (const row of rows) {
    batch.push(row);
    if (batch.length >= 256) {
      yield jobsCsv(batch, header);
      batch = [];
      header = false;
    }
  }
  if (batch.length > 0 || header) yield jobsCsv(batch, header);
}
