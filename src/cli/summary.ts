import { jobsCsv } from '../report/csv.js';
import { statusJson, type StatusSummary } from '../report/status.js';
import type { Ledger } from '../store/index.js';
import { writeReportFile } from './output.js';
import type { ManifestPaths } from './options.js';

/** States of a job the manifest no longer lists that still concern the run: paid, not collected. */
const STILL_AT_THE_SERVICE = new Set(['submitting', 'submitted']);

/**
 * The run summary and `status`, from the ledger alone. `submitting` rows are counted apart:
 * while no run holds the ledger they are the jobs a crash caught mid-submit, which the next
 * run marks in doubt. Given the manifest's ids (a run), it covers those jobs and any job the
 * manifest dropped after it was sent whose result is still to collect: "every job done" must
 * not hide a paid result.
 */
export function summarize(ledger: Ledger, budgetUsd: number | null, manifestIds?: ReadonlySet<string>): StatusSummary {
  const all = ledger.jobOutcomes().map((row) => ({ ...row, inManifest: manifestIds === undefined || manifestIds.has(row.id) }));
  const rows = all.filter((row) => row.inManifest || STILL_AT_THE_SERVICE.has(row.state));
  const counts: Record<string, number> = {
    pending: 0,
    submitting: 0,
    submitted: 0,
    done: 0,
    failed: 0,
    in_doubt: 0,
    skipped: 0,
  };
  for (const row of rows) counts[row.state] = (counts[row.state] ?? 0) + 1;
  return {
    counts: counts as StatusSummary['counts'],
    spentUsd: ledger.spentUsd(),
    budgetUsd,
    jobs: rows,
  };
}

export function storedBudget(ledger: Ledger): number | null {
  const value = ledger.getMeta('budget_usd');
  return value === undefined || value === null ? null : Number(value);
}

/**
 * `<name>.run.json` and `.csv`. Written once before the first submit (`finished: false`): if the
 * ledger is lost later, this file still says requests were sent, and the next run refuses to
 * send them all again. Written again when the run ends.
 */
export async function writeRunReports(paths: ManifestPaths, summary: StatusSummary, finished: boolean): Promise<void> {
  await writeReportFile(paths.runJson, `${JSON.stringify({ kind: 'run', finished, ...statusJson(summary) }, null, 2)}\n`);
  await writeReportFile(
    paths.runCsv,
    jobsCsv(
      summary.jobs.map((job) => ({
        id: job.id,
        type: job.type,
        model: job.model ?? '',
        state: job.state,
        price_usd: job.priceUsd,
        price_source: job.priceSource ?? '',
        request_id: job.requestId ?? '',
        output: job.output ?? '',
        error: job.error ?? '',
      })),
    ),
  );
}
