import { microToUsd } from '../money.js';
import { SCHEMA_VERSION, type RunDocument, type StatusDocument, type StatusJobJson } from './document-schemas.js';
import { batches, jsonListDocument, type Rows } from './json-stream.js';
import type { StatusJob, StatusSummary } from './status.js';

/** What a run adds to the status document: which run wrote it, and what ended it early. */
export type RunDocumentExtras = Pick<RunDocument, 'finished' | 'error'>;

/**
 * `status --json`, and with `run` extras `run --json` and `<name>.run.json`, as text chunks: the
 * contract's fields, then the run's, then one job a line. Everything but the jobs is in the first
 * few hundred bytes, so a reader of a million-job run.json need not parse the rest.
 */
export function statusJsonChunks(summary: StatusSummary, rows: Rows<StatusJob>, run?: RunDocumentExtras): AsyncGenerator<string> {
  const { counts } = summary;
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
    },
    spent: microToUsd(summary.spentMicro),
    budget: summary.budgetMicro === null ? null : microToUsd(summary.budgetMicro),
    ...(run === undefined ? {} : { kind: 'run', finished: run.finished, error: run.error }),
    jobs: [],
  };
  return jsonListDocument(document, rows, statusJobJson);
}

/** One job of the document. Type, state and price source come from the ledger, which holds only known values. */
export function statusJobJson(job: StatusJob): StatusJobJson {
  return {
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
}

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
