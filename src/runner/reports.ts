import { stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { usdToMicro, type MicroUsd } from '../money.js';
import type { CostReportJob } from '../pricing/report.js';
import type { PriceSource } from '../pricing/types.js';
import { estimateMarkdown, type EstimateReport } from '../report/cost-report.js';
import { estimateCsvChunks, groupsCsvChunks, runCsvChunks } from '../report/csv.js';
import { estimateJsonChunks, statusJsonChunks, type RunDocumentExtras } from '../report/documents.js';
import { renderReviewPage, type ReviewJob } from '../report/review-page/render.js';
import { addToSteps, newStepFigures, type StepFigures } from '../report/steps.js';
import { failureText, LISTED_JOBS, type ListedJobs, type StatusJob, type StatusSummary } from '../report/status.js';
import type { JobQuery, JobRow, JobState, SendSelection } from '../store/index.js';
import type { GraphLedger, LedgerHandle, ListingLedger, PlanLedger } from '../store/index.js';
import { kindOf } from '../jobs/index.js';
import { writeReportFile } from './report-file.js';
import { resultGlimpse } from './result-forms.js';
import { jobWindows, mapRows, readTogether } from './windows.js';

/**
 * The run summary and `status`, from the ledger alone, over the manifest's jobs and every job it
 * dropped after it was sent that is still to collect, in doubt or done ("every job done" must not
 * hide a paid result, nor a summary a paid file). `submitting` rows are counted apart: while no
 * run holds the ledger they are the jobs a crash caught mid-submit, which the next run marks in
 * doubt. Groups that need a person, and the dropped jobs, are listed up to LISTED_JOBS and counted
 * in full; the documents and the CSV list every job (runJobs).
 */
export async function summarize(
  ledger: ListingLedger & Pick<PlanLedger, 'spentMicro'> & Pick<GraphLedger, 'readInputs'>,
  budgetMicro: MicroUsd | null,
): Promise<StatusSummary> {
  const counts = await ledger.countsByState('report');
  const listed = (query: Omit<JobQuery, 'limit' | 'scope'> & { scope?: 'dropped' }): Promise<ListedJobs> =>
    listedJobs(ledger, { scope: 'report', ...query });
  // The manifest's scope finds the first in manifest order without sorting every done job.
  const [first] = await ledger.readJobs({ scope: 'manifest', states: ['done'], limit: 1 });
  const firstResult = first ?? (await ledger.readJobs({ scope: 'dropped', states: ['done'], limit: 1 }))[0];
  return {
    counts,
    spentMicro: await ledger.spentMicro(),
    budgetMicro,
    inDoubt: await listed({ states: ['in_doubt'] }),
    failed: await listed({ states: ['failed'] }),
    blocked: await listed({ states: ['blocked'] }),
    notCollected: await listed({ issue: 'not_collected' }),
    statusUnknown: await listed({ issue: 'status_unknown' }),
    dropped: await listed({ scope: 'dropped' }),
    steps: await stepFigures(ledger, 'report'),
    results: { files: counts.done, folder: firstResult?.resultPath == null ? null : path.dirname(firstResult.resultPath) },
  };
}

/**
 * A manifest whose jobs take others' results, by step (one walk of the ledger); undefined for a
 * manifest without inputs, whose reports show no step and pay for no walk.
 */
export async function stepFigures(
  ledger: ListingLedger & Pick<GraphLedger, 'readInputs'>,
  scope: 'manifest' | 'report',
): Promise<StepFigures | undefined> {
  if ((await ledger.readInputs(undefined, 1)).length === 0) return undefined;
  const figures = newStepFigures();
  for await (const { step, state, priceMicro, priceBound } of jobWindows(ledger, { scope })) {
    addToSteps(figures, { step: step ?? 1, state, priceMicro, upperBound: priceBound });
  }
  return figures;
}

/** A ledger row as reports show it. */
export function statusJobOf(row: JobRow): StatusJob {
  return {
    id: row.id,
    type: row.type,
    model: modelOf(row),
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
    step: row.step ?? 1,
    inputs: row.inputs,
  };
}

/** Every job a summary covers (or those in `states`), in manifest order, a window at a time (a fresh pass each call). */
export function runJobs(ledger: ListingLedger, states?: readonly JobState[]): AsyncIterable<StatusJob> {
  return mapRows(jobWindows(ledger, { scope: 'report', states }), statusJobOf);
}

/** The first jobs in `states` a summary covers (LISTED_JOBS of them) and how many there are. */
export function jobsInStates(ledger: ListingLedger, states: readonly JobState[]): Promise<ListedJobs> {
  return listedJobs(ledger, { scope: 'report', states });
}

async function listedJobs(ledger: ListingLedger, query: Omit<JobQuery, 'limit'>): Promise<ListedJobs> {
  const jobs = (await ledger.readJobs({ ...query, limit: LISTED_JOBS })).map(statusJobOf);
  return { jobs, total: jobs.length < LISTED_JOBS ? jobs.length : await ledger.countJobs(query) };
}

/** The manifest's jobs as the cost report lists them, `toSend` for those `send` selects (a fresh pass each call). */
export function estimateJobs(ledger: ListingLedger, send: SendSelection): AsyncIterable<CostReportJob> {
  return mapRows(jobWindows(ledger, { scope: 'manifest', flagSend: send }), costJobOf);
}

export function costJobOf(row: JobRow): CostReportJob {
  return {
    id: row.id,
    type: row.type,
    model: modelOf(row) ?? '',
    priceMicro: row.priceMicro ?? 0,
    source: (row.priceSource ?? 'quoted') as PriceSource,
    toSend: row.toSend === true,
    step: row.step ?? 1,
    upperBound: row.priceBound,
  };
}

/** The budget the last run was given, as it recorded it (decimal dollars, as every version wrote it). */
export async function storedBudget(ledger: Pick<LedgerHandle, 'getMeta'>): Promise<MicroUsd | null> {
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
  /** `<name>.report.html`, the review page written when the run ends; none when omitted. */
  reportHtml?: string | undefined;
}

/**
 * `<name>.run.json` and `.csv`, every job streamed from the ledger. Written once before the
 * first submit (`finished: false`): if the ledger is lost later, this file still says requests
 * were sent, and the next run refuses to send them all again. Written again when the run ends,
 * with what ended it early if anything did. Not written when the files on disk are already what
 * it would write (stillAsWritten).
 */
export async function writeRunReports(
  paths: RunFiles,
  ledger: ListingLedger & Pick<PlanLedger, 'spentMicro'> & Pick<LedgerHandle, 'location' | 'getMeta' | 'setMeta'>,
  summary: StatusSummary,
  run: RunDocumentExtras,
  page?: ReviewPageRequest,
): Promise<void> {
  const pageFile = page === undefined ? undefined : paths.reportHtml;
  const files = [paths.runJson, paths.runCsv, ...(pageFile === undefined ? [] : [pageFile])];
  const from = JSON.stringify({
    jobs: await ledger.jobsVersion(),
    summary,
    run,
    page: page === undefined ? null : { manifest: page.manifest, budgetMicro: page.budgetMicro },
    files,
  });
  if (await stillAsWritten(ledger, from, files)) return;
  // Each row as the documents show it is made once, for both of them (it parses the row's parameters).
  type Read = { row: JobRow; job: StatusJob };
  const jobs = (reads: AsyncIterable<Read>): AsyncIterable<StatusJob> => mapRows(reads, (read) => read.job);
  const readers = [
    (reads: AsyncIterable<Read>) => writeReportFile(paths.runJson, statusJsonChunks(summary, jobs(reads), run)),
    (reads: AsyncIterable<Read>) => writeReportFile(paths.runCsv, runCsvChunks(jobs(reads), summary.steps !== undefined)),
  ];
  if (page !== undefined && pageFile !== undefined) {
    readers.push((reads) => writeReviewPage(ledger, pageFile, page, mapRows(reads, (read) => read.row)));
  }
  await readTogether(mapRows(jobWindows(ledger, { scope: 'report' }), (row) => ({ row, job: statusJobOf(row) })), readers);
  await ledger.setMeta(REPORTS_MARK, JSON.stringify({ from, stamps: await Promise.all(files.map(stampOf)) } satisfies ReportsMark));
}

/** Meta key: what a run's documents were last written from, and the stamps of the files written. */
const REPORTS_MARK = 'run_reports';

const reportsMark = z.object({ from: z.string(), stamps: z.array(z.string().nullable()) });
type ReportsMark = z.infer<typeof reportsMark>;

/**
 * The run's documents on disk are the ones it would write now: written from the same jobs (the
 * ledger's jobsVersion, which every write to a job changes, from any process), summary and
 * run, and each file untouched since (size, time and inode). Then a run that changed nothing
 * need not write a million jobs again (they took 20 s of a 30 s resume). The page keeps the time
 * it was generated at, and everything on it is still true.
 */
async function stillAsWritten(
  ledger: Pick<LedgerHandle, 'getMeta'>,
  from: string,
  files: readonly string[],
): Promise<boolean> {
  const stored = await ledger.getMeta(REPORTS_MARK);
  if (stored === undefined) return false;
  const mark = parseMark(stored);
  if (mark?.from !== from) return false;
  const stamps = await Promise.all(files.map(stampOf));
  return stamps.every((stamp, i) => stamp !== null && stamp === mark.stamps[i]);
}

function parseMark(stored: string): ReportsMark | undefined {
  try {
    return reportsMark.parse(JSON.parse(stored));
  } catch {
    return undefined;
  }
}

async function stampOf(file: string): Promise<string | null> {
  const info = await stat(file).catch(() => undefined);
  return info === undefined ? null : `${info.size}:${info.mtimeMs}:${info.ino}`;
}

/** What `estimate` writes beside the manifest; no file `run` writes has any of these names. */
export interface EstimateFiles {
  estimateJson: string;
  estimateCsv: string;
  estimateGroupsCsv: string;
  estimateMd: string;
}

/** `<name>.estimate.json`, `.csv`, `.groups.csv` and `.md`; `jobs` gives a fresh pass over the jobs each call. */
export async function writeEstimateReports(paths: EstimateFiles, report: EstimateReport, jobs: () => AsyncIterable<CostReportJob>, title: string): Promise<void> {
  await readTogether(jobs(), [
    (rows) => writeReportFile(paths.estimateJson, estimateJsonChunks(report, rows)),
    (rows) => writeReportFile(paths.estimateCsv, estimateCsvChunks(rows, report.steps !== undefined)),
  ]);
  await writeReportFile(paths.estimateGroupsCsv, groupsCsvChunks(report.byGroup));
  await writeReportFile(paths.estimateMd, estimateMarkdown(report, title));
}

export interface ReviewPageRequest {
  /** The manifest's path: the page is titled with its name. */
  manifest: string;
  budgetMicro: MicroUsd | null;
  generatedAt: Date;
}

/**
 * Writes `<name>.report.html` from the ledger alone, streaming its jobs a window at a time, as
 * every report file is written (writeReportFile): whoever opens it never sees half a page.
 */
export async function writeReviewPage(
  ledger: Pick<ListingLedger, 'readJobs'> & Pick<PlanLedger, 'spentMicro'> & Pick<LedgerHandle, 'location'>,
  file: string,
  request: ReviewPageRequest,
  rows: AsyncIterable<JobRow> = jobWindows(ledger, { scope: 'report' }),
): Promise<void> {
  const spentMicro = await ledger.spentMicro();
  // A text or an embedding is shown by its start, read from its file as the rows stream.
  const withGlimpse = async (row: JobRow): Promise<ReviewJob> => {
    const media = kindOf(row.type).output.media;
    const glimpse = row.resultPath === null ? undefined : await resultGlimpse(media, row.resultPath);
    return { ...reviewJob(row), glimpse: glimpse ?? null };
  };
  const pages = renderReviewPage(mapRows(rows, withGlimpse), {
    title: path.basename(request.manifest),
    generatedAt: request.generatedAt.toISOString(),
    ledger: beside(ledger.location, path.dirname(file)),
    spentMicro,
    budgetMicro: request.budgetMicro,
    pageDir: path.dirname(file),
  });
  await writeReportFile(file, pages);
}

/** A path as seen from the page's folder when it is inside it (`promo.mediabatch.db`), else whole. */
function beside(file: string, dir: string): string {
  const relative = path.relative(dir, file);
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}

/** What the page shows of a ledger row; the model and a prompt come from the request's parameters. */
export function reviewJob(row: JobRow): ReviewJob {
  const params = paramsOf(row);
  return {
    id: row.id,
    type: row.type,
    state: row.state,
    priceMicro: row.priceMicro,
    spentMicro: row.spentMicro,
    priceSource: row.priceSource,
    priceKey: row.priceKey,
    model: modelOf(row),
    requestId: row.requestId,
    text: row.text,
    prompt: typeof params['prompt'] === 'string' ? params['prompt'] : null,
    tags: row.tags,
    // A failure the service refunded and allows again says that a later run sends it again.
    error: failureText({ error: row.lastError, retryable: row.retryable, refunded: row.refunded }),
    output: row.resultPath,
    inManifest: row.inManifest,
    inputs: row.inputs,
  };
}

/** The model a job's parameters name, if any. */
export function modelOf(row: Pick<JobRow, 'paramsJson'>): string | null {
  const model = paramsOf(row)['model'];
  return typeof model === 'string' ? model : null;
}

function paramsOf(row: Pick<JobRow, 'paramsJson'>): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(row.paramsJson);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
