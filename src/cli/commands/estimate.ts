import type { CommandModule } from 'yargs';
import { ExitCode } from '../../errors.js';
import { buildCostReport, type CostReport } from '../../pricing/report.js';
import { DEFAULT_RETRY } from '../../runner/context.js';
import { usdToMicro } from '../../money.js';
import { planRun } from '../../runner/plan.js';
import { pricesMicro } from '../../runner/run.js';
import { checkWithService, priceManifest } from '../../runner/prepare.js';
import { costReportJson, formatCostReport } from '../../report/cost-report.js';
import { jobsCsv } from '../../report/csv.js';
import type { CommandResult } from '../main.js';
import { parseConcurrency, withManifestFileOptions, withSharedOptions, type ManifestFileArgs, type SharedArgs } from '../options.js';
import { logLine, useColor, writeJsonDocument, writeReportFile, writeStdout } from '../output.js';
import { openWorkSession, paceFor, withPlanOptions, type PlanArgs, type WorkSession } from '../session.js';

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
      try {
        const report = await estimate(session, concurrency);
        await writeReportFile(session.paths.estimateJson, `${JSON.stringify(costReportJson(report), null, 2)}\n`);
        await writeReportFile(session.paths.estimateCsv, jobsCsv(reportRows(report)));
        if (args.json) await writeJsonDocument(costReportJson(report));
        else await writeStdout(formatCostReport(report, { color: useColor(process.stdout) }));
        logLine(`report written to ${session.paths.estimateJson} and ${session.paths.estimateCsv}`);
        result.exitCode = report.withinBudget ? ExitCode.ok : ExitCode.budget;
      } finally {
        await session.close();
      }
    },
  };
}

/** Validates against the service, prices everything (cached prices cost no call), and reports. */
export async function estimate(session: WorkSession, concurrency: number): Promise<CostReport> {
  const { manifest, ledger, service } = session;
  const stop = new AbortController().signal;
  const deps = {
    client: service.client,
    ledger,
    baseUrl: service.baseUrl,
    pace: paceFor(session),
    retry: DEFAULT_RETRY,
    stop,
    emit: () => undefined,
  };
  await checkWithService(manifest, deps);
  const pricing = await priceManifest(manifest, deps);
  const spentMicro = await ledger.spentMicro();
  const plan = planRun({
    jobs: manifest.jobs,
    rows: new Map((await ledger.jobViews()).map((view) => [view.id, view])),
    prices: pricesMicro(pricing),
    spentMicro,
    budgetMicro: session.budgetMicro,
    partial: false,
    resubmitInDoubt: false,
  });
  const toSend = new Set(plan.submit.map((s) => s.job.id));
  const { balanceUsd } = await service.client.balance();
  return buildCostReport({
    jobs: manifest.jobs,
    pricing,
    spentMicro,
    alreadyDoneIds: new Set(manifest.jobs.filter((j) => !toSend.has(j.id)).map((j) => j.id)),
    budgetMicro: session.budgetMicro,
    balanceMicro: usdToMicro(balanceUsd, 'down'),
    plan: session.planLimits,
    planName: session.planName,
    concurrency,
  });
}

function reportRows(report: CostReport) {
  return report.jobs.map((job) => ({
    id: job.id,
    type: job.type,
    model: job.model,
    state: '',
    price_usd: job.priceMicro,
    price_source: job.source,
    request_id: '',
    output: '',
    error: '',
  }));
}
