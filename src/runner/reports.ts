import { createWriteStream } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { LocalIoError } from '../errors.js';
import { usdToMicro, type MicroUsd } from '../money.js';
import { jobsCsvChunks, type JobCsvRow } from '../report/csv.js';
import { jsonDocumentChunks } from '../report/json-stream.js';
import { LISTED_JOBS, statusJobJson, statusJsonHead, type ListedJobs, type StatusJob, type StatusSummary } from '../report/status.js';
import type { JobQuery, JobRow, Ledger } from '../store/index.js';
import { jobWindows } from './windows.js';

/**
 * The run summary and `status`, from the ledger alone, over the manifest's jobs and every job it
 * dropped after it was sent whose result is still to collect ("every job done" must not hide a
 * paid result). `submitting` rows are counted apart: while no run holds the ledger they are the
 * jobs a crash caught mid-submit, which the next run marks in doubt. Groups that need a person
 * are listed up to LISTED_JOBS and counted in full; `status --json` and the run's reports list
 * every job (runJobs).
 */
export async function summarize(ledger: Ledger, budgetMicro: MicroUsd | null): Promise<StatusSummary> {
  const counts = await ledger.countsByState('report');
  const reported = Object.values(counts).reduce((a, b) => a + b, 0);
  const listed = async (query: Omit<JobQuery, 'scope' | 'limit'>): Promise<ListedJobs> => {
    const full = { scope: 'report' as const, ...query };
    const jobs = (await ledger.readJobs({ ...full, limit: LISTED_JOBS })).map(statusJobOf);
    return { jobs, total: jobs.length < LISTED_JOBS ? jobs.length : await ledger.countJobs(full) };
  };
  const [firstResult] = await ledger.readJobs({ scope: 'report', states: ['done'], limit: 1 });
  return {
    counts,
    spentMicro: await ledger.spentMicro(),
    budgetMicro,
    inDoubt: await listed({ states: ['in_doubt'] }),
    failed: await listed({ states: ['failed'] }),
    notCollected: await listed({ issue: 'not_collected' }),
    statusUnknown: await listed({ issue: 'status_unknown' }),
    dropped: reported - (await ledger.countJobs({ scope: 'manifest' })),
    results: { files: counts.done, folder: firstResult?.resultPath == null ? null : path.dirname(firstResult.resultPath) },
  };
}

/** A ledger row as reports show it. */
export function statusJobOf(row: JobRow): StatusJob {
  const model = (JSON.parse(row.paramsJson) as { model?: unknown }).model;
  return {
    id: row.id,
    type: row.type,
    model: typeof model === 'string' ? model : null,
    priceSource: row.priceSource,
    state: row.state,
    requestId: row.requestId,
    priceMicro: row.priceMicro,
    output: row.resultPath,
    error: row.lastError,
    inManifest: row.inManifest,
    issue: row.issue,
    retryable: row.retryable,
    refunded: row.refunded,
    tags: row.tags,
  };
}

/** Every job a summary covers, in manifest order, a window at a time. */
export async function* runJobs(ledger: Ledger): AsyncGenerator<StatusJob> {
  for await (const row of jobWindows(ledger, { scope: 'report' })) yield statusJobOf(row);
}

/** The budget the last run was given, as it recorded it (decimal dollars, as every version wrote it). */
export async function storedBudget(ledger: Ledger): Promise<MicroUsd | null> {
  const value = await ledger.getMeta('budget_usd');
  return value === undefined ? null : usdToMicro(Number(value), 'down');
}

/** Where a run writes: its results folder and its report files (`<name>.run.json` and `.csv`). */
export interface RunFiles {
  /** The ledger's path, for messages. */
  db: string;
  out: string;
  runJson: string;
  runCsv: string;
  /** `<name>.report.json`, what mediabatch 0.1 wrote: still read as a trace of a run. */
  legacyReport: string;
}

/**
 * `<name>.run.json` and `.csv`, every job streamed from the ledger. Written once before the
 * first submit (`finished: false`): if the ledger is lost later, this file still says requests
 * were sent, and the next run refuses to send them all again. Written again when the run ends.
 */
export async function writeRunReports(paths: RunFiles, ledger: Ledger, summary: StatusSummary, finished: boolean): Promise<void> {
  const head = { kind: 'run', finished, ...statusJsonHead(summary) };
  await writeReportStream(paths.runJson, jsonDocumentChunks(head, 'jobs', mapAsync(runJobs(ledger), statusJobJson)));
  await writeReportStream(paths.runCsv, jobsCsvChunks(mapAsync(runJobs(ledger), csvRowOf)));
}

/** A job as the run's CSV writes it (unknown cells are empty). */
export function csvRowOf(job: StatusJob): JobCsvRow {
  return {
    id: job.id,
    type: job.type,
    model: job.model ?? '',
    state: job.state,
    price_usd: job.priceMicro,
    price_source: job.priceSource ?? '',
    request_id: job.requestId ?? '',
    output: job.output ?? '',
    error: job.error ?? '',
  };
}

export async function* mapAsync<T, U>(items: AsyncIterable<T>, map: (item: T) => U): AsyncGenerator<U> {
  for await (const item of items) yield map(item);
}

/** A report file; a failure to write it is reported (exit 4), never silent. */
export async function writeReportFile(file: string, content: string): Promise<void> {
  try {
    await writeFile(file, content);
  } catch (error) {
    throw new LocalIoError(`cannot write ${file}: ${(error as Error).message}`, 'E_REPORT', error);
  }
}

/** A report file written as its chunks come (a million jobs' worth never sits in memory). */
export async function writeReportStream(file: string, chunks: AsyncIterable<string>): Promise<void> {
  try {
    await pipeline(Readable.from(chunks), createWriteStream(file));
  } catch (error) {
    if (error instanceof LocalIoError || !isFileError(error)) throw error;
    throw new LocalIoError(`cannot write ${file}: ${(error as Error).message}`, 'E_REPORT', error);
  }
}

function isFileError(error: unknown): boolean {
  return typeof (error as NodeJS.ErrnoException).code === 'string' && (error as NodeJS.ErrnoException).syscall !== undefined;
}

/**
 * Makes the results folder and proves a file can be written in it, before anything is paid
 * for: a run that cannot save its results should stop with a message, not after each job.
 */
export async function ensureWritableFolder(dir: string): Promise<void> {
  const probe = path.join(dir, `.mediabatch-probe-${process.pid}`);
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(probe, '');
    await rm(probe, { force: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new LocalIoError(
      `cannot write results to ${dir} (${code}): fix the folder's permissions or pass --out DIR. Nothing was sent.`,
      'E_OUTPUT',
      error,
    );
  }
}
