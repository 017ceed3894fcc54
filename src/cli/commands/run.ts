import type { Argv } from 'yargs';
import { ExitCode } from '../../errors.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_UPLOAD_TIMEOUT_MS } from '../../api/client.js';
import type { InFlight, RunEvent } from '../../runner/context.js';
import { createRunProgress, DEFAULT_MAX_RESULT_BYTES, DEFAULT_RETRY_FAILED, limitsOf, refuseLostLedger, run, type RunOutcome, type Selection } from '../../runner/index.js';
import { errorJson } from '../../report/error-json.js';
import { statusJsonChunks } from '../../report/status-document.js';
import { formatStatusText, submittedLines, type StatusSummary } from '../../report/status.js';
import { runJobs } from '../../runner/reports.js';
import type { CommandContext } from '../app.js';
import { envHint, envOptions, optionLabel } from '../env-options.js';
import { manifestPaths, parseConcurrency, requireNamesForStdin, parseWholeNumber, withManifestFileOptions, withSharedOptions, type ManifestFileArgs, type SharedArgs } from '../options.js';
import { logLine, useColor, writeStdout, writeStdoutChunks } from '../output.js';
import { stamp, untilText } from '../clock.js';
import type { LogFile } from '../log-file.js';
import { startPricingTicker } from '../pricing-progress.js';
import { describeEvent, loadLiveRenderer, startProgress, type Progress } from '../progress.js';
import { resumeCommand } from '../resume-hint.js';
import { runEventRecord, runPlanRecord, withRunLog, type RunLogEnd } from '../run-log.js';
import { openWorkSession, withPlanOptions, type PlanArgs, type WorkSession } from '../session.js';
import { installStopHandlers, type InFlightWait } from '../signals.js';
import { existsSync } from 'node:fs';
import { webhookSettings, withWebhookOptions, type WebhookArgs } from '../webhook-options.js';
import { parseSelection, withSelectionOptions, type SelectionArgs } from '../selection-options.js';
import type { UnjoinedSplit, WebhookSettings } from '../../runner/index.js';

interface RunArgs extends SharedArgs, PlanArgs, ManifestFileArgs, WebhookArgs, SelectionArgs {
  manifest: string;
  'log-file'?: string | undefined;
  /** As typed, like poll-ms: parsed in the handler. */
  concurrency?: string | undefined;
  wait: boolean;
  out?: string | undefined;
  'resubmit-in-doubt': boolean;
  partial: boolean;
  'poll-ms'?: string | undefined;
  'max-result-mb'?: string | undefined;
  retries?: string | undefined;
}

/** The numeric flags, parsed. */
interface RunNumbers {
  concurrency: number;
  pollMs: number | undefined;
  maxResultMb: number;
  webhooks: WebhookSettings | undefined;
  retries: number;
  select: Selection;
}

const MIB = 1024 * 1024;
const DEFAULT_MAX_RESULT_MB = DEFAULT_MAX_RESULT_BYTES / MIB;
const MAX_RESULT_MB_CEILING = 10_240;
const MAX_RETRIES = 20;

export function builder(y: Argv): Argv {
  return withSelectionOptions(withWebhookOptions(withManifestFileOptions(withPlanOptions(withSharedOptions(y)))), 'run')
    .positional('manifest', { type: 'string', demandOption: true })
    .option('concurrency', { type: 'string', describe: `submits in flight at once (${envHint('concurrency')}; default 8)` })
    .option('wait', { type: 'boolean', default: true, describe: 'follow jobs to the end (--no-wait stops after submitting)' })
    .option('out', { type: 'string', describe: `results folder (${envHint('out')}; default: <manifest>.out/ beside the manifest)` })
    .option('resubmit-in-doubt', { type: 'boolean', default: false, describe: 'send in-doubt jobs again (they may be paid twice)' })
    .option('partial', { type: 'boolean', default: false, describe: 'over budget: send what fits in manifest order, skip the rest' })
    .option('poll-ms', {
      type: 'string',
      describe: `first status poll after MS for every kind, backing off to 6×MS (${envHint('poll-ms')}; default: the service's pace, 1.5 s audio, 5 s video)`,
    })
    .option('max-result-mb', {
      type: 'string',
      describe: `refuse (and collect on a later run) results larger than this many megabytes (${envHint('max-result-mb')}; default ${DEFAULT_MAX_RESULT_MB})`,
    })
    .option('retries', {
      type: 'string',
      describe: `send a job that failed at the service, retryable and refunded, again within this run, up to N more times (${envHint('retries')}; default ${DEFAULT_RETRY_FAILED}; 0: leave it failed)`,
    })
    .option('log-file', { type: 'string', describe: 'append every event to this file as JSON Lines (env MEDIABATCH_LOG_FILE)' })
    .middleware(envOptions(['concurrency', 'out', 'poll-ms', 'max-result-mb', 'retries'], process.env));
}

export async function handler(args: RunArgs, context: CommandContext): Promise<number> {
  const { clock } = context;
  const numbers: RunNumbers = {
    concurrency: parseConcurrency(args),
    pollMs: parseWholeNumber(optionLabel(args, 'poll-ms'), args['poll-ms'], { min: 10, max: 600_000, unit: 'milliseconds' }),
    maxResultMb:
      parseWholeNumber(optionLabel(args, 'max-result-mb'), args['max-result-mb'], { min: 1, max: MAX_RESULT_MB_CEILING, unit: 'megabytes' }) ??
      DEFAULT_MAX_RESULT_MB,
    webhooks: webhookSettings(args, process.env),
    retries: parseWholeNumber(optionLabel(args, 'retries'), args.retries, { min: 0, max: MAX_RETRIES, unit: 'retries' }) ?? DEFAULT_RETRY_FAILED,
    select: parseSelection(args),
  };
  requireNamesForStdin(args, true);
  const paths = manifestPaths(args.manifest, args.db, args.out);
  // The log opens first: a log file that cannot be written stops the run before anything is sent.
  return withRunLog(args, paths.manifest, async (log, end) => {
    // Before the ledger is opened (which would create an empty one) as well as after, in run().
    if (!existsSync(paths.db)) refuseLostLedger(paths);
    const session = await openWorkSession(args, { command: 'run', run: true, clock });
    let failure: unknown;
    try {
      return await runWithDisplay(session, { args, numbers, log, end }, context);
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      await session.close(failure);
    }
  }, clock);
}

/** What a run's display needs beside the session: the parsed options and the log. */
interface RunDisplay {
  args: RunArgs;
  numbers: RunNumbers;
  log: LogFile | undefined;
  /** Where the summary goes for the log's last line. */
  end: RunLogEnd;
}

/** Calls the runner with the terminal's stop handlers and progress display around it, then renders the end. */
async function runWithDisplay(session: WorkSession, display: RunDisplay, context: CommandContext): Promise<number> {
  const { ledger, manifest } = session;
  const { args, numbers, log } = display;
  const { argv, clock } = context;
  const inFlight: InFlight = { submits: 0, uploads: 0 };
  const stopControl = installStopHandlers(logLine, waitFor(inFlight), (signal, forced) => log?.write({ event: 'signal', signal, forced }));
  const plan = { limits: limitsOf(session.planName), name: session.planName };
  const runProgress = createRunProgress();
  const ticker = startPricingTicker({ progress: runProgress.pricing, plan, print: logLine, clock });
  let progress: Progress | undefined;
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
      select: numbers.select,
      retryFailed: numbers.retries,
      poll: numbers.pollMs !== undefined ? { firstMs: numbers.pollMs } : args.sim ? 'simulator' : 'service',
      maxResultBytes: numbers.maxResultMb * MIB,
      webhooks: numbers.webhooks,
      signal: stopControl.signal,
      inFlight,
      progress: runProgress,
      onEvent: (event) => {
        log?.write(runEventRecord(event));
        ticker.onEvent(event);
        // Under --sim the simulator in this process delivers to the receiver, wherever it bound.
        if (event.kind === 'webhooks_listening') session.service.simulator?.setWebhookTarget(`http://${event.address}`);
        // Before the first submit there is no live display: warnings (changed jobs, recovered
        // in-doubt ones) and pauses are printed as they come.
        if (progress) progress.onEvent(event);
        else printEvent(event, clock.nowMs());
      },
      onStart: async ({ plan: runPlan, total }) => {
        ticker.stop();
        log?.write(runPlanRecord(runPlan, total, session.planName));
        const snapshot = async () => ({ counts: await ledger.countsByState('report'), spentMicro: await ledger.spentMicro(), budgetMicro: session.budgetMicro });
        progress = startProgress({ snapshot, initial: await snapshot(), total, live, plan, run: runProgress, clock });
      },
    });
  } finally {
    ticker.stop();
    await progress?.stop();
    stopControl.dispose();
  }
  const { outcome, summary } = ran;
  display.end.summary = summary;
  if (args.json) await writeSummaryDocument(session, summary, outcome, context);
  else await writeStdout(formatStatusText(summary, { color: useColor(process.stdout) }));
  // run() writes them whenever it returns, a stop or a fatal error included.
  const { runJson, runCsv, reportHtml } = session.paths;
  logLine(`reports written: ${runJson}, ${runCsv} and the review page ${reportHtml}`);
  if (outcome === undefined) {
    // Nothing was sent: --redo is still to do, and repeated.
    logLine(`stopped before the first submit: nothing was sent. Run the same command again to start: ${resumeHint(argv, ['resubmit-in-doubt'])}`);
    return ExitCode.interrupted;
  }
  return finish(outcome, { summary, picked: ran.picked, unjoined: unjoinedLines(ran.unjoined, argv) }, resumeHint(argv), numbers.webhooks !== undefined, clock.nowMs());
}

/** What keeps each split job from its joined file, and the command that sends only those parts. */
function unjoinedLines(unjoined: readonly UnjoinedSplit[], argv: readonly string[]): string[] {
  const command = resumeCommand(argv).text;
  return unjoined.map(({ id, failedParts }) => {
    const parts = failedParts.join(', ');
    return `job "${id}" cannot be joined: ${parts} failed and no run sends ${failedParts.length === 1 ? 'it' : 'them'} again by itself. To generate only ${failedParts.length === 1 ? 'that part' : 'those parts'} (priced and budgeted; the done parts are not paid again), then join: ${command} --redo ${failedParts.join(',')}`;
  });
}

function printEvent(event: RunEvent, nowMs: number): void {
  const line = describeEvent(event, nowMs);
  if (line !== undefined) logLine(stamp(line, nowMs));
}

/** Why an option the run was given is not in the command to paste. */
const LEFT_OUT_WHY: Record<string, string> = {
  'resubmit-in-doubt': 'without --resubmit-in-doubt: add it again only once you have checked that no result came for the jobs in doubt',
  redo: 'without --redo: the jobs it sent again are collected (or sent) by the plain command; one it had not reached yet is still done or failed, so name it with --redo again',
};

/** The command to paste, and why an option is not in it when it was given. */
function resumeHint(argv: readonly string[], leaveOut?: readonly string[]): string {
  const { text, leftOut } = resumeCommand(argv, leaveOut);
  return leftOut.length === 0 ? text : `${text} (${leftOut.map((name) => LEFT_OUT_WHY[name]).join('; ')})`;
}

/**
 * The run's --json document. A fatal error (auth, balance, disk) is thrown after it by finish();
 * it goes into this document, so stdout still holds exactly one.
 */
async function writeSummaryDocument(session: WorkSession, summary: StatusSummary, outcome: RunOutcome | undefined, context: CommandContext): Promise<void> {
  const fatal = outcome?.execute.fatal;
  await writeStdoutChunks(statusJsonChunks(summary, runJobs(session.ledger), { finished: true, error: fatal === undefined ? undefined : errorJson(fatal) }));
  context.errorInDocument = fatal !== undefined;
}

/** A stop waits for submits in flight; each answers (or fails) within the client's timeout for its kind. */
function waitFor(inFlight: InFlight): InFlightWait {
  return {
    count: () => inFlight.submits,
    get answerWithinMs() {
      return inFlight.uploads > 0 ? DEFAULT_UPLOAD_TIMEOUT_MS : DEFAULT_REQUEST_TIMEOUT_MS;
    },
    get bound() {
      return inFlight.uploads > 0 ? 'the timeout of video submits, which upload images' : 'the request timeout';
    },
  };
}

/**
 * The exit code and last words. Every job done is 0; with --only/--tag, every job they pick:
 * a run of a few jobs is judged on those.
 */
function finish(
  outcome: RunOutcome,
  end: { summary: StatusSummary; picked: { jobs: number; done: number } | undefined; unjoined: readonly string[] },
  hint: string,
  webhooks: boolean,
  /** When the run ended: the daily reset's distance is told from it. */
  nowMs: number,
): number {
  const { summary, picked } = end;
  const counts: Record<string, number> = summary.counts;
  const { execute } = outcome;
  if (execute.fatal !== undefined) throw execute.fatal;
  if (execute.stoppedBySignal) {
    logLine(`stopped. Every request sent was recorded; run the same command again to resume: ${hint}`);
    return ExitCode.interrupted;
  }
  if (execute.dailyLimitUntilMs !== undefined) {
    const after = untilText(execute.dailyLimitUntilMs, nowMs);
    logLine(`the daily limit is reached; run the same command again after ${after} to resume: ${hint}`);
    return ExitCode.incomplete;
  }
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const allDone = picked === undefined ? (counts['done'] ?? 0) === total : picked.done === picked.jobs;
  // Paid for, and still to collect: every later run follows them, from the ledger alone.
  const collect = `run the same command again to collect them: ${hint}`;
  for (const line of submittedLines(summary)) logLine(`${line}. ${collect}`);
  for (const line of end.unjoined) logLine(line);
  if (webhooks && (counts['submitted'] ?? 0) > 0) {
    logLine('while no run listens, the service retries their webhook deliveries for about a day; the next run with --webhook-url listens again and takes them (and asks about the rest)');
  }
  return allDone ? ExitCode.ok : ExitCode.incomplete;
}
