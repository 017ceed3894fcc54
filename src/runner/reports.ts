import { jobsCsv } from '../report/csv.js';
import { statusJson, type StatusSummary } from '../report/status.js';
import { usdToMicro, type MicroUsd } from '../money.js';
import { JOB_STATES, OUTSTANDING_STATES, type JobState } from '../jobs/states.js';
import type { Ledger } from '../store/index.js';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { LocalIoError } from '../errors.js';


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
  /** `<name>.report.html`, the review page written when the run ends; none when omitted. */
  reportHtml?: string | undefined;
}

/**
 * `<name>.run.json` and `.csv`. Written once before the first submit (`finished: false`): if the
 * ledger is lost later, this file still says requests were sent, and the next run refuses to
 * send them all again. Written again when the run ends.
 */
export async function writeRunReports(paths: RunFiles, summary: StatusSummary, finished: boolean): Promise<void> {
  await writeReportFile(paths.runJson, `${JSON.stringify({ kind: 'run', finished, ...statusJson(summary) }, null, 2)}\n`);
  await writeReportFile(
    paths.runCsv,
    jobsCsv(
      summary.jobs.map((job) => ({
        id: job.id,
        type: job.type,
        model: job.model ?? '',
        state: job.state,
        price_usd: job.priceMicro,
        price_source: job.priceSource ?? '',
        request_id: job.requestId ?? '',
        output: job.output ?? '',
        error: job.error ?? '',
      })),
    ),
  );
}

/** A report file; a failure to write it is reported (exit 4), never silent. */
export async function writeReportFile(file: string, content: string): Promise<void> {
  try {
    await writeFile(file, content);
  } catch (error) {
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
