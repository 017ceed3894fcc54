import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { LocalIoError } from '../errors.js';
import { JOB_STATES, OUTSTANDING_STATES, type JobState } from '../jobs/states.js';
import { usdToMicro, type MicroUsd } from '../money.js';
import type { CostReport } from '../pricing/report.js';
import { estimateCsvChunks, groupsCsvChunks, runCsvChunks } from '../report/csv.js';
import { estimateJsonChunks } from '../report/estimate-document.js';
import { estimateMarkdown } from '../report/markdown.js';
import { statusJsonChunks, type RunDocumentExtras } from '../report/status-document.js';
import type { StatusSummary } from '../report/status.js';
import type { Ledger } from '../store/index.js';


/**
 * The run summary and `status`, from the ledger alone. `submitting` rows are counted apart:
 * while no run holds the ledger they are the jobs a crash caught mid-submit, which the next
 * run marks in doubt. Given the manifest's ids (a run), it covers those jobs and any job the
 * manifest dropped after it was sent whose result is still to collect: "every job done" must
 * not hide a paid result.
 */
export async function summarize(ledger: Ledger, budgetMicro: MicroUsd | null, manifestIds?: ReadonlySet<string>): Promise<StatusSummary> {
  const all = (await ledger.jobOutcomes()).map((row) => ({ ...row, inManifest: manifestIds === undefined || manifestIds.has(row.id) }));
  const rows = all.filter((row) => row.inManifest || OUTSTANDING_STATES.has(row.state));
  const counts = Object.fromEntries(JOB_STATES.map((state) => [state, 0])) as Record<JobState, number>;
  for (const row of rows) counts[row.state] += 1;
  return {
    counts: counts as StatusSummary['counts'],
    spentMicro: await ledger.spentMicro(),
    budgetMicro,
    jobs: rows,
  };
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
 * `<name>.run.json` and `.csv`. Written once before the first submit (`finished: false`): if the
 * ledger is lost later, this file still says requests were sent, and the next run refuses to
 * send them all again. Written again when the run ends, with what ended it early if anything did.
 * The jobs are streamed from the summary's rows (the seam where the ledger's windows plug in).
 */
export async function writeRunReports(paths: RunFiles, summary: StatusSummary, run: RunDocumentExtras): Promise<void> {
  await writeReportFile(paths.runJson, statusJsonChunks(summary, run));
  await writeReportFile(paths.runCsv, runCsvChunks(summary.jobs));
}

/** What `estimate` writes beside the manifest; no file `run` writes has any of these names. */
export interface EstimateFiles {
  estimateJson: string;
  estimateCsv: string;
  estimateGroupsCsv: string;
  estimateMd: string;
}

/** `<name>.estimate.json`, `.csv`, `.groups.csv` and `.md`. */
export async function writeEstimateReports(paths: EstimateFiles, report: CostReport, title: string): Promise<void> {
  await writeReportFile(paths.estimateJson, estimateJsonChunks(report));
  await writeReportFile(paths.estimateCsv, estimateCsvChunks(report.jobs));
  await writeReportFile(paths.estimateGroupsCsv, groupsCsvChunks(report.byGroup));
  await writeReportFile(paths.estimateMd, estimateMarkdown(report, title));
}

/**
 * A report file, streamed from its chunks into a file beside it and renamed over it once whole:
 * a crash mid-way leaves the previous copy, never half a document (run.json is the trace a lost
 * ledger is found by). A failure to write it is reported (exit 4), never silent.
 */
export async function writeReportFile(file: string, content: string | AsyncIterable<string>): Promise<void> {
  const partial = `${file}.${process.pid}.part`;
  try {
    await pipeline(typeof content === 'string' ? [content] : content, createWriteStream(partial));
    await rename(partial, file);
  } catch (error) {
    await rm(partial, { force: true });
    throw new LocalIoError(`cannot write ${file}: ${(error as Error).message}`, 'E_REPORT', error);
  }
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
