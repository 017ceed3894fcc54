import path from 'node:path';
import type { Argv } from 'yargs';
import { ExitCode } from '../../errors.js';
import type { CostReport, CostReportJob } from '../../pricing/report.js';
import { estimateMarkdown, formatCostReport } from '../../report/cost-report.js';
import { estimateCsvChunks } from '../../report/csv.js';
import { estimateJsonChunks } from '../../report/documents.js';
import { createRunProgress, estimate, limitsOf } from '../../runner/index.js';
import { writeEstimateReports } from '../../runner/reports.js';
import { printEvent } from '../event-text.js';
import type { CommandContext } from '../app.js';
import {
  envHint,
  envOptions,
  parseConcurrency,
  parseSelection,
  resolveFormat,
  withFormatOption,
  withManifestFileOptions,
  withPlanOptions,
  withSelectionOptions,
  withSharedOptions,
  type OutputFormat,
} from '../options.js';
import { logLine, useColor, writeStdout, writeStdoutChunks } from '../output.js';
import { startPricingTicker } from '../pricing-progress.js';
import { openWorkSession } from '../session.js';

/** What estimate prints: every format a report has but the listings of status. */
type EstimateFormat = Extract<OutputFormat, 'table' | 'json' | 'csv' | 'md'>;

export function builder(y: Argv) {
  return withSelectionOptions(withFormatOption(withManifestFileOptions(withPlanOptions(withSharedOptions(y))), ['table', 'json', 'csv', 'md'], 'one job a row'), 'estimate')
    .positional('manifest', { type: 'string', demandOption: true })
    .option('concurrency', {
      type: 'string',
      describe: `submits in flight at once, for the duration estimate (${envHint('concurrency')}; default 8)`,
    })
    .middleware(envOptions(['concurrency'], process.env));
}

type EstimateArgs = Awaited<ReturnType<typeof builder>['argv']>;

export async function handler(args: EstimateArgs, { clock }: CommandContext): Promise<number> {
  const format = resolveFormat(args);
  const concurrency = parseConcurrency(args);
  const select = parseSelection(args);
  const session = await openWorkSession(args, { command: 'estimate', run: false, clock });
  let failure: unknown;
  const progress = createRunProgress();
  const ticker = startPricingTicker({ progress: progress.pricing, plan: { limits: limitsOf(session.planName), name: session.planName }, print: logLine, clock });
  try {
    const { report, firstJobs, jobs } = await estimate({
      manifest: session.manifest,
      ledger: session.ledger,
      service: session.service,
      budgetMicro: session.budgetMicro,
      plan: session.planName,
      concurrency,
      select,
      progress,
      clock,
      onEvent: (event) => {
        ticker.onEvent(event);
        printEvent(event, clock.nowMs());
      },
    }).finally(() => ticker.stop());
    const title = path.basename(session.paths.manifest);
    await writeEstimateReports(session.paths, report, jobs, title);
    await print(report, { firstJobs, jobs }, format, title);
    const { estimateJson, estimateCsv, estimateGroupsCsv, estimateMd } = session.paths;
    logLine(`reports written: ${estimateJson}, ${estimateCsv}, ${estimateGroupsCsv} and ${estimateMd}`);
    return report.withinBudget ? ExitCode.ok : ExitCode.budget;
  } catch (error) {
    failure = error;
    throw error;
  } finally {
    await session.close(failure);
  }
}

/** The JSON and the CSV list every job, read from the ledger a window at a time (a fresh pass each). */
function print(
  report: CostReport,
  rows: { firstJobs: readonly CostReportJob[]; jobs: () => AsyncIterable<CostReportJob> },
  format: EstimateFormat,
  title: string,
): Promise<void> {
  switch (format) {
    case 'json':
      return writeStdoutChunks(estimateJsonChunks(report, rows.jobs()));
    case 'csv':
      return writeStdoutChunks(estimateCsvChunks(rows.jobs()));
    case 'md':
      return writeStdout(estimateMarkdown(report, title));
    case 'table':
      return writeStdout(formatCostReport(report, { color: useColor(process.stdout), firstJobs: rows.firstJobs }));
  }
}
