import { stringify } from 'csv-stringify/sync';
import { escapeControlChars } from '../control-chars.js';
import { decimalUsd } from '../money.js';
import type { CostReportJob } from '../pricing/report.js';
import type { GroupSummary } from '../pricing/types.js';
import { batches, type Rows } from './json-stream.js';
import type { StatusJob } from './status.js';

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

/**
 * A file's columns in order, each with its cell's text (money through decimalUsd: `0.000077`,
 * never an exponent). New columns go at the end: a script that reads cells by position keeps working.
 */
type Columns<T> = Record<string, (row: T) => string>;

/**
 * RFC 4180 CSV with a header, as text chunks from an iterable of rows (a million rows are never
 * one string); commas, quotes and newlines in cells (error texts) are quoted.
 */
async function* csvChunks<T>(rows: Rows<T>, columns: Columns<T>): AsyncGenerator<string> {
  const options = { columns: Object.keys(columns), cast: { string: csvCell } };
  const cells = Object.values(columns);
  const record = (row: T): string[] => cells.map((cell) => cell(row));
  let header = true;
  for await (const batch of batches(rows)) {
    yield stringify(batch.map(record), { ...options, header });
    header = false;
  }
  if (header) yield stringify([], { ...options, header });
}

const money = (micro: number | null): string => (micro === null ? '' : decimalUsd(micro));

/** What the service said of a failure: `yes`, `no`, or empty when it said nothing (or the job has not failed). */
const said = (flag: boolean | null | undefined): string => (flag === true ? 'yes' : flag === false ? 'no' : '');

const RUN_CSV = {
  id: (job) => job.id,
  type: (job) => job.type,
  model: (job) => job.model ?? '',
  state: (job) => job.state,
  price_usd: (job) => money(job.priceMicro),
  price_source: (job) => job.priceSource ?? '',
  request_id: (job) => job.requestId ?? '',
  output: (job) => job.output ?? '',
  error: (job) => job.error ?? '',
  tags: (job) => (job.tags ?? []).join(';'),
  retryable: (job) => said(job.retryable),
  refunded: (job) => said(job.refunded),
  in_manifest: (job) => (job.inManifest === false ? 'no' : 'yes'),
} satisfies Columns<StatusJob>;

export const RUN_CSV_COLUMNS = Object.keys(RUN_CSV);

/** `<name>.run.csv` and `status --format csv`: one job a row, as the ledger has it. */
export function runCsvChunks(rows: Rows<StatusJob>): AsyncGenerator<string> {
  return csvChunks(rows, RUN_CSV);
}

/** `<name>.estimate.csv` and `estimate --format csv`: one job a row with its price. */
export function estimateCsvChunks(rows: Rows<CostReportJob>): AsyncGenerator<string> {
  return csvChunks(rows, {
    id: (job) => job.id,
    type: (job) => job.type,
    model: (job) => job.model,
    price_usd: (job) => money(job.priceMicro),
    price_source: (job) => job.source,
    to_send: (job) => (job.toSend ? 'yes' : 'no'),
  });
}

/**
 * `<name>.estimate.groups.csv`: one price group a row (jobs sharing every priced field), for a
 * spreadsheet or a finance ticket: what each voice and model costs, and how sure each price is.
 */
export function groupsCsvChunks(groups: Rows<GroupSummary>): AsyncGenerator<string> {
  return csvChunks(groups, {
    type: (group) => group.type,
    model: (group) => group.model,
    voice: groupVoice,
    parameters: groupParameters,
    characters: (group) => (group.characters === null ? '' : String(group.characters)),
    jobs: (group) => String(group.jobs),
    price_source: groupSource,
    jobs_quoted: (group) => String(group.jobsBySource.quoted),
    jobs_derived: (group) => String(group.jobsBySource.derived),
    jobs_cached: (group) => String(group.jobsBySource.cached),
    price_calls: (group) => String(group.calls),
    total_usd: (group) => decimalUsd(group.totalMicro),
  });
}

export function groupVoice(group: GroupSummary): string {
  const voice = group.params['voice'];
  return voice === undefined || voice === null ? '' : String(voice);
}

/** The priced fields besides model and voice, as `lang=en-us speed=1`. */
export function groupParameters(group: GroupSummary): string {
  return Object.entries(group.params)
    .filter(([field, value]) => field !== 'model' && field !== 'voice' && value !== null && value !== undefined)
    .map(([field, value]) => `${field}=${typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
    .join(' ');
}

export const PRICE_SOURCES = ['quoted', 'derived', 'cached'] as const;

/** Where a group's prices came from: one source, or the mix (`quoted+derived`: probes quoted, the rest derived). */
export function groupSource(group: GroupSummary): string {
  return PRICE_SOURCES.filter((source) => group.jobsBySource[source] > 0).join('+');
}
