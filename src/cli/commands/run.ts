import type { CommandModule } from 'yargs';
import { ExitCode } from '../../errors.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_UPLOAD_TIMEOUT_MS } from '../../api/client.js';
import { kindOf } from '../../jobs/index.js';
import type { Manifest } from '../../manifest/types.js';
import type { InFlight, RunEvent } from '../../runner/context.js';
import { DEFAULT_MAX_RESULT_BYTES, refuseLostLedger, run, type RunOutcome } from '../../runner/index.js';
import { formatStatusText, statusJson, submittedLines, type StatusSummary } from '../../report/status.js';
import type { CommandResult } from '../main.js';
import { errorDocument } from '../error-document.js';
import { manifestPaths, parseConcurrency, parseWholeNumber, withManifestFileOptions, withSharedOptions, type ManifestFileArgs, type SharedArgs } from '../options.js';
import { logLine, useColor, writeJsonDocument, writeStdout } from '../output.js';
import { describeEvent, loadLiveRenderer, startProgress, type Progress } from '../progress.js';
import { openWorkSession, withPlanOptions, type PlanArgs, type WorkSession } from '../session.js';
import { installStopHandlers, type InFlightWait } from '../signals.js';
import { existsSync } from 'node:fs';
import { webhookSettings, withWebhookOptions, type WebhookArgs } from '../webhook-options.js';
import type { WebhookSettings } from '../../runner/index.js';

interface RunArgs extends SharedArgs, PlanArgs, ManifestFileArgs, WebhookArgs {
  manifest: string;
  /** As typed, like poll-ms: parsed in the handler. */
  concurrency?: string | undefined;
  wait: boolean;
  out?: string | undefined;
  'resubmit-in-doubt': boolean;
  partial: boolean;
  'poll-ms'?: string | undefined;
  'max-result-mb'?: string | undefined;
}

/** The numeric flags, parsed. */
interface RunNumbers {
  concurrency: number;
  pollMs: number | undefined;
  maxResultMb: number;
  webhooks: WebhookSettings | undefined;
}

const MIB = 1024 * 1024;
const DEFAULT_MAX_RESULT_MB = DEFAULT_MAX_RESULT_BYTES / MIB;
const MAX_RESULT_MB_CEILING = 10_240;

export function runCommand(result: CommandResult): CommandModule<object, RunArgs> {
  return {
    command: 'run <manifest>',
    describe: 'estimate, enforce the budget, submit, follow and download; run it again to resume',
    builder: (y) =>
      withWebhookOptions(withManifestFileOptions(withPlanOptions(withSharedOptions(y))))
        .positional('manifest', { type: 'string', demandOption: true })
        .option('concurrency', { type: 'string', describe: 'submits in flight at once (default 8)' })
        .option('wait', { type: 'boolean', default: true, describe: 'follow jobs to the end (--no-wait stops after submitting)' })
        .option('out', { type: 'string', describe: 'results folder (default: <manifest>.out/ beside the manifest)' })
        .option('resubmit-in-doubt', { type: 'boolean', default: false, describe: 'send in-doubt jobs again (they may be paid twice)' })
        .option('partial', { type: 'boolean', default: false, describe: 'over budget: send what fits in manifest order, skip the rest' })
        .option('poll-ms', {
          type: 'string',
          describe: "first status poll after MS for every kind, backing off to 6×MS (default: the service's pace, 1.5 s audio, 5 s video)",
        })
        .option('max-result-mb', {
          type: 'string',
          describe: `refuse (and collect on a later run) results larger than this many megabytes (default ${DEFAULT_MAX_RESULT_MB})`,
        }),
    handler: async (args) => {
      const numbers: RunNumbers = {
        concurrency: parseConcurrency(args.concurrency),
        pollMs: parseWholeNumber('--poll-ms', args['poll-ms'], { min: 10, max: 600_000, unit: 'milliseconds' }),
        maxResultMb:
          parseWholeNumber('--max-result-mb', args['max-result-mb'], { min: 1, max: MAX_RESULT_MB_CEILING, unit: 'megabytes' }) ??
          DEFAULT_MAX_RESULT_MB,
        webhooks: webhookSettings(args, process.env),
      };
      // Before the ledger is opened (which would create an empty one) as well as after, in run().
      const paths = manifestPaths(args.manifest, args.db, args.out);
      if (!existsSync(paths.db)) refuseLostLedger(paths);
      const session = await openWorkSession(args, { command: 'run', run: true });
      try {
        result.exitCode = await runWithDisplay(session, args, numbers, result);
      } finally {
        await session.close();
      }
    },
  };
}

/** Calls the runner with the terminal's stop handlers and progress display around it, then renders the end. */
async function runWithDisplay(session: WorkSession, args: RunArgs, numbers: RunNumbers, result: CommandResult): Promise<number> {
  const { ledger, manifest } = session;
  const inFlight: InFlight = { submits: 0 };
  const stopControl = installStopHandlers(logLine, waitFor(inFlight, manifest));
  let progress: Progress | undefined;
  const early: RunEvent[] = [];
  const live = await loadLiveRenderer(process.stderr.isTTY === true);
  let ran: Awaited<ReturnType<typeof run>>;
  try {
    ran = await run({
      manifest,
      ledger,
      service: session.service,
      files: session.paths,
      budgetMicro: session.budgetMicro,
      plan: session.planName,
      concurrency: numbers.concurrency,
      noWait: !args.wait,
      resubmitInDoubt: args['resubmit-in-doubt'],
      partial: args.partial,
      poll: numbers.pollMs !== undefined ? { firstMs: numbers.pollMs } : args.sim ? 'simulator' : 'service',
      maxResultBytes: numbers.maxResultMb * MIB,
      webhooks: numbers.webhooks,
      signal: stopControl.signal,
      inFlight,
      onEvent: (event) => {
        // Under --sim the simulator in this process delivers to the receiver, wherever it bound.
        if (event.kind === 'webhooks_listening') session.service.simulator?.setWebhookTarget(`http://${event.address}`);
        if (progress) progress.onEvent(event);
        else early.push(event);
      },
      onStart: async ({ total }) => {
        const snapshot = async () => ({ counts: await ledger.countsByState(), spentMicro: await ledger.spentMicro(), budgetMicro: session.budgetMicro });
        progress = startProgress({ snapshot, initial: await snapshot(), total, live });
        for (const event of early.splice(0)) progress.onEvent(event);
      },
    });
  } finally {
    // Warnings raised before the first submit (recovered in-doubt jobs, changed jobs) still show.
    if (progress === undefined) early.map(describeEvent).forEach((line) => line !== undefined && logLine(line));
    await progress?.stop();
    stopControl.dispose();
  }
  const { outcome, summary } = ran;
  if (args.json) await writeSummaryDocument(statusJson(summary), outcome, result);
  else await writeStdout(formatStatusText(summary, { color: useColor(process.stdout) }));
  if (outcome === undefined) {
    logLine(`stopped before the first submit: nothing was sent. Run the same command again to start: mediabatch run ${args.manifest}`);
    return ExitCode.interrupted;
  }
  return finish(outcome, summary, args, numbers.webhooks !== undefined);
}

/**
 * The run's --json document. A fatal error (auth, balance, disk) is thrown after it by finish();
 * it goes into this document, so stdout still holds exactly one.
 */
async function writeSummaryDocument(summary: object, outcome: RunOutcome | undefined, result: CommandResult): Promise<void> {
  const fatal = outcome?.execute.fatal;
  await writeJsonDocument(fatal === undefined ? summary : { ...summary, ...errorDocument(fatal) });
  result.errorInDocument = fatal !== undefined;
}

/** A stop waits for submits in flight; each answers (or fails) within the client's timeout for its kind. */
function waitFor(inFlight: InFlight, manifest: Manifest): InFlightWait {
  const uploads = manifest.jobs.some((job) => Object.values(kindOf(job.type).files).includes('image'));
  return {
    count: () => inFlight.submits,
    answerWithinMs: uploads ? DEFAULT_UPLOAD_TIMEOUT_MS : DEFAULT_REQUEST_TIMEOUT_MS,
    bound: uploads ? 'the timeout of video submits, which upload images' : 'the request timeout',
  };
}

function finish(outcome: RunOutcome, summary: StatusSummary, args: RunArgs, webhooks: boolean): number {
  const counts: Record<string, number> = summary.counts;
  const { execute } = outcome;
  if (execute.fatal !== undefined) throw execute.fatal;
  const again = `run the same command again to resume: mediabatch run ${args.manifest}`;
  if (execute.stoppedBySignal) {
    logLine(`stopped. Every request sent was recorded; ${again}`);
    return ExitCode.interrupted;
  }
  if (execute.dailyLimitUntilMs !== undefined) {
    logLine(`the daily limit is reached; ${again} after ${new Date(execute.dailyLimitUntilMs).toISOString()}`);
    return ExitCode.incomplete;
  }
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  if ((counts['done'] ?? 0) === total) return ExitCode.ok;
  // Paid for, and still to collect: every later run follows them, from the ledger alone.
  const collect = `run the same command again to collect them: mediabatch run ${args.manifest}`;
  for (const line of submittedLines(summary.jobs)) logLine(`${line}. ${collect}`);
  if (webhooks && (counts['submitted'] ?? 0) > 0) {
    logLine('while no run listens, the service retries their webhook deliveries for about a day; the next run with --webhook-url listens again and takes them (and asks about the rest)');
  }
  return ExitCode.incomplete;
}
