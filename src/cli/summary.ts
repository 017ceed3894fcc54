import { jobsCsv } from '../report/csv.js';
import { statusJson, type StatusSummary } from '../report/status.js';
import type { Ledger } from '../store/index.js';
import { writeReportFile } from './output.js';
import type { ManifestPaths } from './options.js';

/**
 * The run summary and `status`, from the ledger alone. `submitting` rows are counted apart:
 * while no run holds the ledger they are the jobs a crash caught mid-submit, which the next
 * run marks in doubt.
 */
export function summarize(ledger: Ledger, budgetUsd: number | null, onlyIds?: ReadonlySet<string>): StatusSummary {
  const all = ledger.jobOutcomes();
  const rows = onlyIds === undefined ? all : all.filter((row) => onlyIds.has(row.id));
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

export async function writeRunReports(paths: ManifestPaths, summary: StatusSummary): Promise<void> {
  await writeReportFile(paths.report, `${JSON.stringify({ kind: 'run', ...statusJson(summary) }, null, 2)}\n`);
  await writeReportFile(
    paths.csv,
    jobsCsv(
      summary.jobs.map((job) => ({
        id: job.id,
        type: job.type,
        model: '',
        state: job.state,
        price_usd: job.priceUsd,
        price_source: '',
        request_id: job.requestId ?? '',
        output: job.output ?? '',
        error: job.error ?? '',
      })),
    ),
  );
}
