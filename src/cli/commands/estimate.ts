import type { CommandModule } from 'yargs';
import { ExitCode } from '../../errors.js';
import { costJobJson, costReportJson, formatCostReport, type CostJob } from '../../report/cost-report.js';
import { jobsCsvChunks, type JobCsvRow } from '../../report/csv.js';
import { jsonDocumentChunks } from '../../report/json-stream.js';
import { createRunProgress, estimate, limitsOf } from '../../runner/index.js';
import { mapAsync, writeReportStream } from '../../runner/reports.js';
import { stamp } from '../clock.js';
import { describeEvent } from '../event-text.js';
import { startPricingTicker } from '../pricing-progress.js';
import type { CommandResult } from '../main.js';
import { parseConcurrency, withManifestFileOptions, withSharedOptions, type ManifestFileArgs, type SharedArgs } from '../options.js';
import { logLine, useColor, writeJsonStream, writeStdout } from '../output.js';
import { openWorkSession, withPlanOptions, type PlanArgs } from '../session.js';

interface EstimateArgs extends SharedArgs, PlanArgs, ManifestFileArgs {
  manifest: string;
  concurrency?: string | undefined;
}

export function estimateCommand(result: CommandResult): CommandModule<object, EstimateArgs> {
  return {
    command: 'estimate <manifest>',
    describe: 'price every job and print the cost report; exit 3 if over budget; submits nothing',
    builder: (y) =>
      withManifestFileOptions(withPlanOptions(withSharedOptions(y)))
        .positional('manifest', { type: 'string', demandOption: true })
        .option('concurrency', { type: 'string', describe: 'submits in flight at once, for the duration estimate (default 8)' }),
    handler: async (args) => {
      const concurrency = parseConcurrency(args.concurrency);
      const session = await openWorkSession(args, { command: 'estimate', run: false });
      let failure: unknown;
      const progress = createRunProgress();
      const ticker = startPricingTicker({ progress: progress.pricing, plan: { limits: limitsOf(session.planName), name: session.planName }, print: logLine });
      try {
        const { report, firstJobs, jobs } = await estimate({
          manifest: session.manifest,
          ledger: session.ledger,
          service: session.service,
          budgetMicro: session.budgetMicro,
          plan: session.planName,
          concurrency,
          progress,
          onEvent: (event) => {
            ticker.onEvent(event);
            const line = describeEvent(event);
            if (line !== undefined) logLine(stamp(line));
          },
        }).finally(() => ticker.stop());
        await writeReportStream(session.paths.estimateJson, jsonDocumentChunks(costReportJson(report), 'jobs', mapAsync(jobs(), costJobJson)));
        await writeReportStream(session.paths.estimateCsv, jobsCsvChunks(mapAsync(jobs(), csvRow)));
        if (args.json) await writeJsonStream(costReportJson(report), 'jobs', mapAsync(jobs(), costJobJson));
        else await writeStdout(formatCostReport(report, { color: useColor(process.stdout), firstJobs }));
        logLine(`report written to ${session.paths.estimateJson} and ${session.paths.estimateCsv}`);
        result.exitCode = report.withinBudget ? ExitCode.ok : ExitCode.budget;
      } catch (error) {
        failure = error;
        throw error;
      } finally {
        await session.close(failure);
      }
    },
  };
}

function csvRow(job: CostJob): JobCsvRow {
  return { id: job.id, type: job.type, model: job.model, state: '', price_usd: job.priceMicro, price_source: job.source, request_id: '', output: '', error: '' };
}
