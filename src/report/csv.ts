import { stringify } from 'csv-stringify/sync';
import { escapeControlChars } from '../control-chars.js';
import { decimalUsd } from '../money.js';
import type { CostReportJob } from '../pricing/report.js';
import type { GroupSummary } from '../pricing/types.js';
import { batches, estimateJobJson, statusJobJson, type Rows } from './documents.js';
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
 * RFC 4180 CSV with a header, as text chunks from an iterable of rows (a million rows are never
 * one string); commas, quotes and newlines in cells (error texts) are quoted. New columns go at
 * the end: a script that reads cells by position keeps working.
 */
async function* csvChunks<T>(rows: Rows<T>, columns: string[], record: (row: T) => string[]): AsyncGenerator<string> {
  const options = { columns, cast: { string: csvCell } };
  let header = true;
  for await (const batch of batches(rows)) {
    yield stringify(batch.map(record), { ...options, header });
    header = false;
  }
  if (header) yield stringify([], { ...options, header });
}

/**
 * One row a job: the `keys` of the very object its JSON document lists, `price` headed
 * `price_usd`. Money is the document's exact decimal (never an exponent: a price is whole
 * micro-dollars); a flag is `yes` or `no`, empty when the service said nothing; tags are `;`-joined, and
 * inputs too, each as `field=id`.
 */
function jsonCsvChunks<T, J>(rows: Rows<T>, toJson: (row: T) => J, keys: readonly (keyof J & string)[]) {
  const cell = (value: unknown): string => {
    if (value === null || value === undefined) return '';
    if (typeof value === 'boolean') return value ? 'yes' : 'no';
    if (typeof value === 'object' && !Array.isArray(value)) {
      return Object.entries(value).map(([key, item]) => `${key}=${String(item)}`).join(';');
    }
    return [value].flat().join(';');
  };
  const record = (row: T): string[] => {
    const json = toJson(row);
    return keys.map((key) => cell(json[key]));
  };
  return csvChunks(rows, keys.map((key) => (key === 'price' ? 'price_usd' : key)), record);
}

const RUN_CSV = ['id', 'type', 'model', 'state', 'price', 'price_source', 'request_id', 'output', 'error', 'tags',
  'retryable', 'refunded', 'in_manifest'] as const;

export const RUN_CSV_COLUMNS = RUN_CSV.map((key) => (key === 'price' ? 'price_usd' : key));

/**
 * `<name>.run.csv` and `status --format csv`: one job a row, as the ledger has it; with `steps` (jobs
 * of the manifest take others' results) each job's step and inputs too.
 */
export function runCsvChunks(rows: Rows<StatusJob>, steps = false): AsyncGenerator<string> {
  if (!steps) return jsonCsvChunks(rows, statusJobJson, RUN_CSV);
  return jsonCsvChunks(rows, (job) => statusJobJson(job, true), [...RUN_CSV, 'step', 'inputs']);
}

const ESTIMATE_CSV = ['id', 'type', 'model', 'price', 'price_source', 'to_send'] as const;

/** `<name>.estimate.csv` and `estimate --format csv`: one job a row with its price; with `steps`, its step and bound. */
export function estimateCsvChunks(rows: Rows<CostReportJob>, steps = false): AsyncGenerator<string> {
  if (!steps) return jsonCsvChunks(rows, estimateJobJson, ESTIMATE_CSV);
  return jsonCsvChunks(rows, (job) => estimateJobJson(job, true), [...ESTIMATE_CSV, 'step', 'upper_bound']);
}

/**
 * `<name>.estimate.groups.csv`: one price group a row (jobs sharing every priced field), for a
 * spreadsheet or a finance ticket: what each voice and model costs, and how sure each price is.
 */
const GROUPS_CSV: Record<string, (group: GroupSummary) => string> = {
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
};

export function groupsCsvChunks(groups: Rows<GroupSummary>): AsyncGenerator<string> {
  return csvChunks(groups, Object.keys(GROUPS_CSV), (group) => Object.values(GROUPS_CSV).map((cell) => cell(group)));
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
