import { existsSync } from 'node:fs';
import type { Argv } from 'yargs';
import { ExitCode } from '../../errors.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_UPLOAD_TIMEOUT_MS } from '../../api/client.js';
import type { InFlight } from '../../runner/context.js';
import * as runner from '../../runner/index.js';
import { errorJson, statusJsonChunks } from '../../report/documents.js';
import { formatStatusText, submittedLines } from '../../report/status.js';
import { runJobs } from '../../runner/reports.js';
import type { CommandContext } from '../app.js';
import { printEvent, untilText } from '../event-text.js';
import { manifestPaths, requireNamesForStdin } from '../../lib/ledger.js';
import { exitCodeOf } from '../../lib/calls.js';
import { DEFAULT_LISTEN, DEFAULT_MAX_RESULT_MB, parseSelection, runNumbers } from '../../lib/options.js';
import * as options from '../options.js';
import { logLine, useColor, writeStdout, writeStdoutChunks } from '../output.js';
import { startProgress, type Progress } from '../progress.js';
import { resumeHint, unjoinedLines } from '../resume-hint.js';
import { runEventRecord, runPlanRecord, withRunLog, type LogFile, type RunLogEnd } from '../run-log.js';
import { withWorkSession, type WorkSession } from '../session.js';
import { installStopHandlers } from '../signals.js';


export function builder(y: Argv) {
  const listen = DEFAULT_LISTEN;
  const base = options
    .withWorkOptions(y, 'run')
    .option('webhook-url', {
      type: 'string',
      describe: 'follow jobs by the service\'s signed webhooks: the public https:// URL it posts to, forwarded to --listen (env MEDIABATCH_WEBHOOK_URL)',
    })
    .option('listen', {
      type: 'string',
      describe: `where the webhook receiver listens, HOST:PORT (env MEDIABATCH_LISTEN, default ${listen})`,
    })
    .option('wait', { type: 'boolean', default: true, describe: 'follow jobs to the end (--no-wait stops after submitting)' })
    .option('resubmit-in-doubt', { type: 'boolean', default: false, describe: 'send in-doubt jobs again (they may be paid twice)' })
    .option('partial', { type: 'boolean', default: false, describe: 'over budget: send what fits in manifest order, skip the rest' })
    .option('log-file', { type: 'string', describe: 'append every event to this file as JSON Lines (env MEDIABATCH_LOG_FILE)' });
  return options.withEnvOptions(base, {
    out: 'results folder ({env}; default: <manifest>.out/ beside the manifest)',
    'poll-ms': "first status poll after MS for every kind, backing off to 6×MS ({env}; default: the service's pace, 1.5 s audio, 5 s video)",
    'max-result-mb': `refuse (and collect on a later run) results larger than this many megabytes ({env}; default ${DEFAULT_MAX_RESULT_MB})`,
    retries: `send a job that failed at the service, retryable and refunded, again within this run, up to N more times ({env}; default ${runner.DEFAULT_RETRY_FAILED}; 0: leave it failed)`,
  });
}

/** The runner's options from the command line, each checked before anything is opened. */
function runOptions(args: RunArgs) {
  const flags = { pollMs: 'poll-ms', maxResultMb: 'max-result-mb', retries: 'retries' } as const;
  const given = { pollMs: args['poll-ms'], maxResultMb: args['max-result-mb'], retries: args.retries };
  return {
    ...runNumbers(given, args.sim, (option) => options.optionLabel(args, flags[option])),
    concurrency: options.parseConcurrency(args),
    noWait: !args.wait,
    resubmitInDoubt: args['resubmit-in-doubt'],
    partial: args.partial,
    select: parseSelection(args),
    webhooks: options.webhookSettings(args, process.env),
  };
}

type RunArgs = Awaited<ReturnType<typeof builder>['argv']>;

export async function handler(args: RunArgs, context: CommandContext): Promise<number> {
  const asked = runOptions(args);
  requireNamesForStdin(args, true);
  const paths = manifestPaths(args.manifest, args.db, args.out);
  // The log opens first: a log file that cannot be written stops the run before anything is sent.
  return withRunLog(args, paths.manifest, async (log, end) => {
    // Before the ledger is opened (which would create an empty one) as well as after, in run().
    if (!existsSync(paths.db)) runner.refuseLostLedger(paths);
    const work = { command: 'run', run: true, clock: context.clock };
    const display = { json: args.json, log, end };
    return withWorkSession(args, work, (session) => runWithDisplay(session, asked, display, context));
  }, context.clock);
}

/** Calls the runner with the terminal's stop handlers and progress display around it, then renders the end. */
async function runWithDisplay(
  session: WorkSession,
  asked: ReturnType<typeof runOptions>,
  display: { json: boolean; log: LogFile | undefined; end: RunLogEnd },
  context: CommandContext,
): Promise<number> {
  const { ledger, planName, budgetMicro, ticker } = session;
  const { log } = display;
  const { argv, clock } = context;
  const inFlight: InFlight = { submits: 0, uploads: 0 };
  const timeoutsMs = { request: DEFAULT_REQUEST_TIMEOUT_MS, upload: DEFAULT_UPLOAD_TIMEOUT_MS };
  const onStop = (signal: NodeJS.Signals, forced: boolean): void => log?.write({ event: 'signal', signal, forced });
  const stopControl = installStopHandlers(inFlight, timeoutsMs, onStop);
  let shown: Progress | undefined;
  let ran: Awaited<ReturnType<typeof runner.run>>;
  try {
    ran = await runner.run({
      ...asked,
      manifest: session.manifest,
      ledger,
      service: session.service,
      files: session.paths,
      budgetMicro,
      plan: planName,
      signal: stopControl.signal,
      inFlight,
      progress: session.progress,
      onEvent: (event) => {
        log?.write(runEventRecord(event));
        ticker.onEvent(event);
        // Under --sim the simulator in this process delivers to the receiver, wherever it bound.
        if (event.kind === 'webhooks_listening') session.service.simulator?.setWebhookTarget(`http://${event.address}`);
        // Before the first submit there is no live display: warnings (changed jobs, recovered
        // in-doubt ones) and pauses are printed as they come.
        if (shown) shown.onEvent(event);
        else printEvent(event, clock.nowMs());
      },
      onStart: async ({ plan: runPlan, total }) => {
        ticker.stop();
        log?.write(runPlanRecord(runPlan, total, planName));
        const snapshot = async () => ({ counts: await ledger.countsByState('report'), spentMicro: await ledger.spentMicro(), budgetMicro });
        const following = !asked.noWait;
        shown = await startProgress({ snapshot, total, plan: session.plan, run: session.progress, clock, following });
      },
    });
  } finally {
    ticker.stop();
    await shown?.stop();
    stopControl.dispose();
  }
  const { outcome, summary } = ran;
  display.end.summary = summary;
  const fatal = outcome?.execute.fatal;
  if (display.json) {
    // A fatal error (auth, balance, disk) is thrown below: it goes into this document, so stdout
    // still holds exactly one.
    const error = fatal === undefined ? undefined : errorJson(fatal);
    await writeStdoutChunks(statusJsonChunks(summary, runJobs(ledger), { finished: true, error }));
    context.errorInDocument = fatal !== undefined;
  } else {
    await writeStdout(formatStatusText(summary, { color: useColor(process.stdout) }));
  }
  // run() writes them whenever it returns, a stop or a fatal error included.
  const { runJson, runCsv, reportHtml } = session.paths;
  logLine(`reports written: ${runJson}, ${runCsv} and the review page ${reportHtml}`);
  if (outcome === undefined) {
    // Nothing was sent: --redo is still to do, and repeated.
    logLine(`stopped before the first submit: nothing was sent. Run the same command again to start: ${resumeHint(argv, ['resubmit-in-doubt'])}`);
    return ExitCode.interrupted;
  }
  if (fatal !== undefined) throw fatal;
  const hint = resumeHint(argv);
  const { execute } = outcome;
  if (execute.stoppedBySignal) {
    logLine(`stopped. Every request sent was recorded; run the same command again to resume: ${hint}`);
    return ExitCode.interrupted;
  }
  if (execute.dailyLimitUntilMs !== undefined) {
    // Told from when the run ended.
    const after = untilText(execute.dailyLimitUntilMs, clock.nowMs());
    logLine(`the daily limit is reached; run the same command again after ${after} to resume: ${hint}`);
    return ExitCode.incomplete;
  }
  // Paid for, and still to collect: every later run follows them, from the ledger alone.
  for (const line of submittedLines(summary)) logLine(`${line}. run the same command again to collect them: ${hint}`);
  for (const line of unjoinedLines(ran.unjoined, argv)) logLine(line);
  const counts: Record<string, number> = summary.counts;
  if (asked.webhooks !== undefined && (counts['submitted'] ?? 0) > 0) {
    logLine('while no run listens, the service retries their webhook deliveries for about a day; the next run with --webhook-url listens again and takes them (and asks about the rest)');
  }
  // Every job done is 0; with --only/--tag, every job they pick: a run of a few jobs is judged on those.
  return exitCodeOf(ran);
}
