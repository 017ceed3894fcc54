import path from 'node:path';
import type { Argv } from 'yargs';
import { ExitCode } from '../../errors.js';
import type { CostReportJob } from '../../pricing/report.js';
import { estimateMarkdown, formatCostReport, type EstimateReport } from '../../report/cost-report.js';
import { estimateCsvChunks } from '../../report/csv.js';
import { estimateJsonChunks } from '../../report/documents.js';
import { estimate } from '../../runner/index.js';
import { writeEstimateReports } from '../../runner/reports.js';
import { printEvent } from '../event-text.js';
import type { CommandContext } from '../app.js';
import { parseSelection } from '../../lib/options.js';
import { parseConcurrency, resolveFormat, withFormatOption, withWorkOptions } from '../options.js';
import { logLine, useColor, writeStdout, writeStdoutChunks } from '../output.js';
import { withWorkSession } from '../session.js';

export function builder(y: Argv) {
  return withFormatOption(withWorkOptions(y, 'estimate'), ['table', 'json', 'csv', 'md'], 'one job a row');
}

type EstimateArgs = Awaited<ReturnType<typeof builder>['argv']>;

export async function handler(args: EstimateArgs, { clock }: CommandContext): Promise<number> {
  const format = resolveFormat(args);
  const concurrency = parseConcurrency(args);
  const select = parseSelection(args);
  return withWorkSession(args, { command: 'estimate', run: false, clock }, async (session) => {
    const { ticker } = session;
    const { report, firstJobs, jobs } = await estimate({
      manifest: session.manifest,
      ledger: session.ledger,
      service: session.service,
      budgetMicro: session.budgetMicro,
      plan: session.planName,
      concurrency,
      select,
      progress: session.progress,
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
  });
}

/** The JSON and the CSV list every job, read from the ledger a window at a time (a fresh pass each). */
function print(
  report: EstimateReport,
  rows: { firstJobs: readonly CostReportJob[]; jobs: () => AsyncIterable<CostReportJob> },
  format: ReturnType<typeof resolveFormat<'table' | 'json' | 'csv' | 'md'>>,
  title: string,
): Promise<void> {
  switch (format) {
    case 'json':
      return writeStdoutChunks(estimateJsonChunks(report, rows.jobs()));
    case 'csv':
      return writeStdoutChunks(estimateCsvChunks(rows.jobs(), report.steps !== undefined));
    case 'md':
      return writeStdout(estimateMarkdown(report, title));
    case 'table':
      return writeStdout(formatCostReport(report, { color: useColor(process.stdout), firstJobs: rows.firstJobs }));
  }
}
