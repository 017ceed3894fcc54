import { stringify } from 'csv-stringify/sync';
import { escapeControlChars } from '../control-chars.js';
import { decimalUsd } from '../money.js';
import type { CostReportJob } from '../pricing/report.js';
import type { GroupSummary } from '../pricing/types.js';
import type { Rows } from './json-stream.js';
import type { StatusJob } from './status.js';

/** One CSV row: every cell already text (money through decimalUsd: `0.000077`, never an exponent). */
type CsvRecord<C extends string> = Record<C, string>;

/** What a spreadsheet takes for the start of a formula. */
const FORMULA_START = /^[=+\-@]/;

/**
 * Every text cell: control characters (ESC from a manifest's tags, a service's error) as visible
 * escapes, as the table shows them, so `cat` on the file cannot drive a terminal (a line break
 * stays: the cell is quoted); and a cell a spreadsheet would run as a formula (`=HYPERLINK(…)`,
 * `=cmd|…`) gets a leading `'`, which makes it plain text when opened. Tab and CR are escaped
 * first, so they cannot hide one.
 */
export function csvCell(text: string): string {
  const visible = text.split('\n').map(escapeControlChars).join('\n');
  return FORMULA_START.test(visible) ? `'${visible}` : visible;
}

/** Rows are turned into text this many at a time: one stringify call each, bounded memory. */
const BATCH_ROWS = 1000;

/**
 * RFC 4180 CSV with a header, as text chunks from an iterable of rows (a million rows are never
 * one string); commas, quotes and newlines in cells (error texts) are quoted.
 */
export async function* csvChunks<T, C extends string>(rows: Rows<T>, columns: readonly C[], toRecord: (row: T) => CsvRecord<C>): AsyncGenerator<string> {
  const options = { columns: [...columns], cast: { string: csvCell } };
  let batch: CsvRecord<C>[] = [];
  let header = true;
  for await (const row of rows) {
    batch.push(toRecord(row));
    if (batch.length < BATCH_ROWS) continue;
    yield stringify(batch, { ...options, header });
    header = false;
    batch = [];
  }
  if (header || batch.length > 0) yield stringify(batch, { ...options, header });
}

const money = (micro: number | null): string => (micro === null ? '' : decimalUsd(micro));

/** New columns go at the end: a script that reads cells by position keeps working. */
export const RUN_CSV_COLUMNS = [
  'id',
  'type',
  'model',
  'state',
  'price_usd',
  'price_source',
  'request_id',
  'output',
  'error',
  'tags',
  'retryable',
  'refunded',
  'in_manifest',
] as const;

/** What the service said of a failure: `yes`, `no`, or empty when it said nothing (or the job has not failed). */
const said = (flag: boolean | null | undefined): string => (flag === true ? 'yes' : flag === false ? 'no' : '');

/** `<name>.run.csv` and `status --format csv`: one job a row, as the ledger has it. */
export function runCsvChunks(rows: Rows<StatusJob>): AsyncGenerator<string> {
  return csvChunks(rows, RUN_CSV_COLUMNS, (job) => ({
    id: job.id,
    type: job.type,
    model: job.model ?? '',
    state: job.state,
    price_usd: money(job.priceMicro),
    price_source: job.priceSource ?? '',
    request_id: job.requestId ?? '',
    output: job.output ?? '',
    error: job.error ?? '',
    tags: (job.tags ?? []).join(';'),
    retryable: said(job.retryable),
    refunded: said(job.refunded),
    in_manifest: job.inManifest === false ? 'no' : 'yes',
  }));
}

export const ESTIMATE_CSV_COLUMNS = ['id', 'type', 'model', 'price_usd', 'price_source', 'to_send'] as const;

/** `<name>.estimate.csv` and `estimate --format csv`: one job a row with its price. */
export function estimateCsvChunks(rows: Rows<CostReportJob>): AsyncGenerator<string> {
  return csvChunks(rows, ESTIMATE_CSV_COLUMNS, (job) => ({
    id: job.id,
    type: job.type,
    model: job.model,
    price_usd: money(job.priceMicro),
    price_source: job.source,
    to_send: job.toSend ? 'yes' : 'no',
  }));
}

export const GROUPS_CSV_COLUMNS = [
  'type',
  'model',
  'voice',
  'parameters',
  'characters',
  'jobs',
  'price_source',
  'jobs_quoted',
  'jobs_derived',
  'jobs_cached',
  'price_calls',
  'total_usd',
] as const;

/**
 * `<name>.estimate.groups.csv`: one price group a row (jobs sharing every priced field), for a
 * spreadsheet or a finance ticket: what each voice and model costs, and how sure each price is.
 */
export function groupsCsvChunks(groups: Rows<GroupSummary>): AsyncGenerator<string> {
  return csvChunks(groups, GROUPS_CSV_COLUMNS, (group) => ({
    type: group.type,
    model: group.model,
    voice: group.params['voice'] === undefined || group.params['voice'] === null ? '' : String(group.params['voice']),
    parameters: groupParameters(group),
    characters: group.characters === null ? '' : String(group.characters),
    jobs: String(group.jobs),
    price_source: groupSource(group),
    jobs_quoted: String(group.jobsBySource.quoted),
    jobs_derived: String(group.jobsBySource.derived),
    jobs_cached: String(group.jobsBySource.cached),
    price_calls: String(group.calls),
    total_usd: decimalUsd(group.totalMicro),
  }));
}

/** The priced fields besides model and voice, as `lang=en-us speed=1`. */
export function groupParameters(group: GroupSummary): string {
  return Object.entries(group.params)
    .filter(([field, value]) => field !== 'model' && field !== 'voice' && value !== null && value !== undefined)
    .map(([field, value]) => `${field}=${typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
    .join(' ');
}

/** Where a group's prices came from: one source, or the mix (`quoted+derived`: probes quoted, the rest derived). */
export function groupSource(group: GroupSummary): string {
  const sources = (['quoted', 'derived', 'cached'] as const).filter((source) => group.jobsBySource[source] > 0);
  return sources.length === 0 ? '' : sources.join('+');
}
