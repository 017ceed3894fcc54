import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { CommandModule } from 'yargs';
import { ConfigError, ExitCode } from '../../errors.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_UPLOAD_TIMEOUT_MS } from '../../api/client.js';
import { kindOf } from '../../jobs/index.js';
import type { Manifest } from '../../manifest/types.js';
import { createRunContext, DEFAULT_RETRY, pollEvery, servicePoll, simulatorPoll, type InFlight, type RunContext, type RunEvent } from '../../runner/context.js';
import type { RunPlan } from '../../runner/plan.js';
import { runManifest, type RunOutcome } from '../../runner/run.js';
import { formatStatusText, statusJson, submittedLines, type StatusSummary } from '../../report/status.js';
import type { CommandResult } from '../main.js';
import { errorDocument } from '../error-document.js';
import { manifestPaths, parseConcurrency, parseWholeNumber, withManifestFileOptions, withSharedOptions, type ManifestFileArgs, type ManifestPaths, type SharedArgs } from '../options.js';
import { ensureWritableFolder, logLine, useColor, writeJsonDocument, writeStdout } from '../output.js';
import { describeEvent, loadLiveRenderer, startProgress, type Progress } from '../progress.js';
import { openWorkSession, paceFor, withPlanOptions, type PlanArgs, type WorkSession } from '../session.js';
import { installStopHandlers, type InFlightWait } from '../signals.js';
import { summarize, writeRunReports } from '../summary.js';

interface RunArgs extends SharedArgs, PlanArgs, ManifestFileArgs {
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
}

/** The service's outputs are at most 100 MB; the default leaves a little slack for container overhead. */
const DEFAULT_MAX_RESULT_MB = 110;
const MAX_RESULT_MB_CEILING = 10_240;
const MIB = 1024 * 1024;

export function runCommand(result: CommandResult): CommandModule<object, RunArgs> {
  return {
    command: 'run <manifest>',
    describe: 'estimate, enforce the budget, submit, follow and download; run it again to resume',
    builder: (y) =>
      withManifestFileOptions(withPlanOptions(withSharedOptions(y)))
        .positional('manifest', { type: 'string', demandOption: true })
        .option('concurrency', { type: 'string', describe: 'submits in flight at once (default 8)' })
        .option('wait', { type: 'boolean', default: true, describe: 'follow jobs to the end (--no-wait stops after submitting)' })
        .option('out', { type: 'string', describe: 'results folder (default: <manifest>.out/ beside the manifest)' })
        .option('resubmit-in-doubt', { type: 'boolean', default: false, describe: 'send in-doubt jobs again (they may be paid twice)' })
        .option('partial', { type: 'boolean', default: false, describe: 'over budget: send what fits in manifest order, skip the rest' })
        .option('poll-ms', {
          type: 'string',
          describe: "first status poll after MS for every type, backing off to 6×MS (default: the service's pace, 1.5 s audio, 5 s video)",
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
      };
      const paths = manifestPaths(args.manifest, args.db, args.out);
      if (!existsSync(paths.db)) refuseLostLedger(paths);
      const session = await openWorkSession(args, { command: 'run', run: true });
      try {
        // A ledger that records no job may be a new one made since (estimate makes one for its caches).
        if (Object.values(await session.ledger.countsByState()).every((n) => n === 0)) refuseLostLedger(paths);
        if (args.wait) await ensureWritableFolder(session.paths.out);
        result.exitCode = await run(session, args, numbers, result);
      } finally {
        await session.close();
      }
    },
  };
}

async function run(session: WorkSession, args: RunArgs, numbers: RunNumbers, result: CommandResult): Promise<number> {
  const { ledger, manifest } = session;
  const inFlight: InFlight = { submits: 0 };
  const stopControl = installStopHandlers(logLine, waitFor(inFlight, manifest));
  const halt = new AbortController();
  const stop = AbortSignal.any([stopControl.signal, halt.signal]);
  let progress: Progress | undefined;
  const early: RunEvent[] = [];
  const emit = (event: RunEvent): void => (progress ? progress.onEvent(event) : void early.push(event));
  const live = await loadLiveRenderer(process.stderr.isTTY === true);
  const manifestIds = new Set(manifest.jobs.map((j) => j.id));
  const startDisplay = async (plan: RunPlan): Promise<void> => {
    // The trace of sent requests goes down before the first of them: a ledger lost after this
    // point must not let a later run send (and pay for) everything again.
    if (plan.submit.length > 0) await writeRunReports(session.paths, await summarize(ledger, session.budgetMicro, manifestIds), false);
    // Jobs the manifest dropped after they were sent are collected too, so they count here.
    const dropped = plan.follow.filter((f) => !manifestIds.has(f.job.id)).length;
    const snapshot = async () => ({ counts: await ledger.countsByState(), spentMicro: await ledger.spentMicro(), budgetMicro: session.budgetMicro });
    progress = startProgress({
      snapshot,
      initial: await snapshot(),
      total: manifest.jobs.length + dropped,
      live,
    });
    for (const event of early.splice(0)) progress.onEvent(event);
  };
  const ctx = createRunContext({
    client: session.service.client,
    ledger,
    pace: paceFor(session, (what, untilMs, reason) => emit({ kind: 'paused', what, untilMs, reason })),
    options: {
      concurrency: numbers.concurrency,
      budgetMicro: session.budgetMicro,
      noWait: !args.wait,
      resubmitInDoubt: args['resubmit-in-doubt'],
      outDir: session.paths.out,
      poll: pollScheduleFor(numbers.pollMs, args.sim),
      retry: DEFAULT_RETRY,
      maxResultBytes: numbers.maxResultMb * MIB,
    },
    stop,
    emit,
    inFlight,
  });
  let outcome: RunOutcome | undefined;
  try {
    outcome = await runManifest({
      manifest,
      ctx,
      baseUrl: session.service.baseUrl,
      partial: args.partial,
      userStop: stopControl.signal,
      halt,
      onExecute: startDisplay,
    });
  } catch (error) {
    // A stop while checking, pricing or asking the balance ends the call in flight with an
    // abort error. No submit has started (the display starts with the first), so nothing was
    // sent: an interruption like any other, not a failure.
    if (!stopControl.signal.aborted || progress !== undefined) throw error;
  } finally {
    // Warnings raised before the first submit (recovered in-doubt jobs, changed jobs) still show.
    if (progress === undefined) early.map(describeEvent).forEach((line) => line !== undefined && logLine(line));
    await progress?.stop();
    stopControl.dispose();
    // Every change is in before the summary reads them; the writer thread goes with its heap.
    await ledger.flush();
  }
  const summary = await summarize(ledger, session.budgetMicro, manifestIds);
  await writeRunReports(session.paths, summary, true);
  if (args.json) await writeSummaryDocument(statusJson(summary), outcome, result);
  else await writeStdout(formatStatusText(summary, { color: useColor(process.stdout) }));
  if (outcome === undefined) {
    logLine(`stopped before the first submit: nothing was sent. Run the same command again to start: mediabatch run ${args.manifest}`);
    return ExitCode.interrupted;
  }
  return finish(outcome, summary, args);
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

/**
 * The ledger is the only record of what was paid for. When it is gone (or records no job) but
 * an earlier run left results in the folder, or a run report listing requests the service took
 * (all a --no-wait run leaves), a new ledger would send, and charge, every job again.
 */
function refuseLostLedger(paths: ManifestPaths): void {
  const traces = [resultsIn(paths.out), requestsIn(paths.runJson), requestsIn(paths.legacyReport)].filter((trace) => trace !== undefined);
  if (traces.length === 0) return;
  const what = traces.map((trace) => trace.what).join(' and ');
  const where = traces.map((trace) => trace.path).join(' and ');
  throw new ConfigError(
    `no ledger with jobs at ${paths.db}, but ${what}: without its ledger every job would be sent, and paid for, again. Restore the ledger (or pass --db PATH), or move ${where} aside to start over.`,
    'E_LEDGER_MISSING',
  );
}

interface EarlierRun {
  what: string;
  path: string;
}

function resultsIn(folder: string): EarlierRun | undefined {
  let entries: string[];
  try {
    entries = readdirSync(folder);
  } catch {
    return undefined;
  }
  return entries.some((name) => !name.startsWith('.')) ? { what: `${folder} holds results of an earlier run`, path: folder } : undefined;
}

/** States of a job that has left this machine (a request id, or perhaps one nobody heard). */
const NOT_SENT = new Set(['pending', 'skipped']);

/** A run report (`finished: false` is written before the first submit) that says requests left. */
function requestsIn(report: string): EarlierRun | undefined {
  let parsed: { kind?: unknown; finished?: unknown; jobs?: { state?: unknown; request_id?: unknown }[] };
  try {
    parsed = JSON.parse(readFileSync(report, 'utf8')) as typeof parsed;
  } catch {
    // No report, or not one of ours: nothing to go by.
    return undefined;
  }
  if (parsed.kind !== 'run' || !Array.isArray(parsed.jobs)) return undefined;
  const sent = parsed.jobs.filter((job) => typeof job?.request_id === 'string' || (typeof job?.state === 'string' && !NOT_SENT.has(job.state))).length;
  if (sent > 0) return { what: `${report} lists ${sent} requests already sent`, path: report };
  if (parsed.finished === false) return { what: `${report} says a run started sending requests`, path: report };
  return undefined;
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

function pollScheduleFor(pollMs: number | undefined, sim: boolean): RunContext['options']['poll'] {
  if (pollMs !== undefined) return pollEvery(pollMs);
  return sim ? simulatorPoll() : servicePoll();
}

function finish(outcome: RunOutcome, summary: StatusSummary, args: RunArgs): number {
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
  return ExitCode.incomplete;
}
