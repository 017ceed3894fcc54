import type { MediabatchError } from '../errors.js';
import { microToUsd } from '../money.js';
import type { CostReportJob, CostTotals } from '../pricing/report.js';
import type { EstimateReport } from './cost-report.js';
import { stepsInOrder } from './steps.js';
import { SCHEMA_VERSION } from './document-schemas.js';
import type { ErrorJson, EstimateDocument, EstimateJobJson, RunDocument } from './document-schemas.js';
import type { StatusDocument, StatusJobJson } from './document-schemas.js';
import type { StatusJob, StatusSummary } from './status.js';

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
export async function* jsonListDocument<T>(
  document: Fields,
  rows: Rows<T>,
  toJson: (row: T) => unknown,
): AsyncGenerator<string> {
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

/**
 * `estimate --json` and `<name>.estimate.json` as text chunks: the contract's fields first, in
 * its order (schema_version, total, spent, budget, within_budget, price_calls), then one job a
 * line, then the totals. `rows` are the report's jobs (read from the ledger in windows).
 */
export function estimateJsonChunks(report: EstimateReport, rows: Rows<CostReportJob>): AsyncGenerator<string> {
  const steps = report.steps !== undefined;
  return jsonListDocument(estimateDocument(report), rows, (job) => estimateJobJson(job, steps));
}

/** `steps`: the manifest's jobs take others' results, and each says its step and whether its price is a bound. */
export function estimateJobJson(job: CostReportJob, steps = false): EstimateJobJson {
  const json: EstimateJobJson = {
    id: job.id,
    type: job.type,
    model: job.model,
    price: microToUsd(job.priceMicro),
    price_source: job.source,
    to_send: job.toSend,
    priceSource: job.source,
  };
  return steps ? { ...json, step: job.step ?? 1, upper_bound: job.upperBound === true } : json;
}

/** The document with its jobs left to the rows; the 0.1 camelCase aliases last. */
function estimateDocument(report: EstimateReport): EstimateDocument {
  const byModel = totalsJson(report.byModel);
  return {
    schema_version: SCHEMA_VERSION,
    total: microToUsd(report.totalMicro),
    spent: microToUsd(report.spentMicro),
    budget: report.budgetMicro === null ? null : microToUsd(report.budgetMicro),
    within_budget: report.withinBudget,
    price_calls: report.priceCalls,
    jobs: [],
    by_model: byModel,
    by_type: totalsJson(report.byType),
    ...(report.steps === undefined ? {} : {
      by_step: totalsJson(Object.fromEntries(stepsInOrder(report.steps))),
      includes_upper_bounds: report.steps.upperBounds,
    }),
    groups: report.byGroup.map((g) => ({
      key: g.key,
      type: g.type,
      model: g.model,
      params: { ...g.params },
      jobs: g.jobs,
      characters: g.characters,
      distinct_lengths: g.distinctLengths,
      method: g.method,
      calls: g.calls,
      total: microToUsd(g.totalMicro),
      jobs_by_source: { ...g.jobsBySource },
    })),
    to_spend: microToUsd(report.toSpendMicro),
    jobs_to_send: report.jobsToSend,
    left: report.leftMicro === null ? null : microToUsd(report.leftMicro),
    over_by: microToUsd(report.overByMicro),
    fit_count: report.fitCount,
    fit_total: microToUsd(report.fitMicro),
    balance: report.balanceMicro === null ? null : microToUsd(report.balanceMicro),
    balance_covers: report.balanceCovers,
    plan: report.planName,
    cached_price_age_s: report.cachedPriceAgeMs === null ? null : Math.round(report.cachedPriceAgeMs / 1000),
    duration: {
      ms: Math.round(report.duration.durationMs),
      text: report.durationText,
      status_polls_min: report.duration.statusPollsMin,
      status_per_day: report.duration.statusPerDay ?? null,
      with_webhooks: {
        ms: Math.round(report.duration.withWebhooks.durationMs),
        text: report.duration.withWebhooks.text,
        status_calls_min: report.duration.withWebhooks.statusCallsMin,
      },
      by_class: report.duration.byClass.map((c) => ({ what: c.what, requests: c.requests, ms: Math.round(c.durationMs), limit: c.limitText })),
    },
    withinBudget: report.withinBudget,
    priceCalls: report.priceCalls,
    byModel,
  };
}

function totalsJson(totals: Record<string, CostTotals>): EstimateDocument['by_type'] {
  return Object.fromEntries(Object.entries(totals).map(([name, t]) => [name, { jobs: t.jobs, total: microToUsd(t.totalMicro) }]));
}

/** What a run adds to the status document: which run wrote it, and what ended it early. */
export type RunDocumentExtras = Pick<RunDocument, 'finished' | 'error'>;

/**
 * `status --json`, and with `run` extras `run --json` and `<name>.run.json`, as text chunks: the
 * contract's fields, then the run's, then one job a line. Everything but the jobs is in the first
 * few hundred bytes, so a reader of a million-job run.json need not parse the rest.
 */
export function statusJsonChunks(summary: StatusSummary, rows: Rows<StatusJob>, run?: RunDocumentExtras): AsyncGenerator<string> {
  const { counts, steps } = summary;
  const document: StatusDocument | RunDocument = {
    schema_version: SCHEMA_VERSION,
    // `submitting` is counted apart: jobs a crash caught mid-submit.
    counts: {
      pending: counts.pending,
      submitted: counts.submitted,
      done: counts.done,
      failed: counts.failed,
      in_doubt: counts.in_doubt,
      skipped: counts.skipped,
      submitting: counts.submitting ?? 0,
      blocked: counts.blocked ?? 0,
    },
    spent: microToUsd(summary.spentMicro),
    budget: summary.budgetMicro === null ? null : microToUsd(summary.budgetMicro),
    ...(run === undefined ? {} : { kind: 'run', finished: run.finished, error: run.error }),
    ...(steps === undefined ? {} : { steps: Object.fromEntries(stepsInOrder(steps).map(([step, t]) => [step, t.counts])) }),
    jobs: [],
  };
  return jsonListDocument(document, rows, (job) => statusJobJson(job, steps !== undefined));
}

/**
 * One job of the document. Type, state and price source come from the ledger, which holds only
 * known values. With `steps` (jobs of the manifest take others' results), its step and inputs.
 */
export function statusJobJson(job: StatusJob, steps = false): StatusJobJson {
  const json: StatusJobJson = {
    id: job.id,
    type: job.type as StatusJobJson['type'],
    state: job.state as StatusJobJson['state'],
    request_id: job.requestId,
    price: job.priceMicro === null ? null : microToUsd(job.priceMicro),
    output: job.output,
    error: job.error,
    tags: [...(job.tags ?? [])],
    model: job.model ?? null,
    price_source: (job.priceSource ?? null) as StatusJobJson['price_source'],
    in_manifest: job.inManifest ?? true,
    collect_issue: job.issue ?? null,
    retryable: job.retryable ?? null,
    refunded: job.refunded ?? null,
  };
  return steps ? { ...json, step: job.step ?? 1, inputs: { ...job.inputs } } : json;
}

/** `status --format ids`: one job id a line, what `run --only` (and xargs) take back. */
export function idLines(rows: Rows<StatusJob>): AsyncGenerator<string> {
  return lines(rows, (job) => job.id);
}

/** `status --format jsonl`: one job a line, the very object the status document lists. */
export function jsonLines(rows: Rows<StatusJob>, steps = false): AsyncGenerator<string> {
  return lines(rows, (job) => JSON.stringify(statusJobJson(job, steps)));
}

async function* lines<T>(rows: Rows<T>, line: (row: T) => string): AsyncGenerator<string> {
  for await (const batch of batches(rows)) yield batch.map((row) => `${line(row)}\n`).join('');
}

/** An expected failure as documents carry it: its stable code, the message people read, the exit code. */
export function errorJson(error: MediabatchError): ErrorJson {
  return { code: error.code, message: error.message, exit_code: error.exitCode };
}
