import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { CommandModule } from 'yargs';
import { ConfigError, ExitCode, UsageError } from '../../errors.js';
import { createRunContext, DEFAULT_RETRY, pollEvery, SERVICE_POLL, SIMULATOR_POLL, type RunContext, type RunEvent } from '../../runner/context.js';
import type { RunPlan } from '../../runner/plan.js';
import { runManifest, type RunOutcome } from '../../runner/run.js';
import { formatStatusText, statusJson } from '../../report/status.js';
import type { CommandResult } from '../main.js';
import { manifestPaths, withManifestFileOptions, withSharedOptions, type ManifestFileArgs, type ManifestPaths, type SharedArgs } from '../options.js';
import { ensureWritableFolder, logLine, useColor, writeJson, writeStdout } from '../output.js';
import { describeEvent, loadLiveRenderer, startProgress, type Progress } from '../progress.js';
import { openWorkSession, paceFor, withPlanOptions, type PlanArgs, type WorkSession } from '../session.js';
import { installStopHandlers } from '../signals.js';
import { summarize, writeRunReports } from '../summary.js';
import { threadWriter } from '../../store/index.js';

interface RunArgs extends SharedArgs, PlanArgs, ManifestFileArgs {
  manifest: string;
  concurrency: number;
  wait: boolean;
  out?: string | undefined;
  'resubmit-in-doubt': boolean;
  partial: boolean;
  'poll-ms'?: number | undefined;
}

/** API.md: outputs are at most 100 MB; a little slack for container overhead. */
const MAX_RESULT_BYTES = 110 * 1024 * 1024;

export function runCommand(result: CommandResult): CommandModule<object, RunArgs> {
  return {
    command: 'run <manifest>',
    describe: 'estimate, enforce the budget, submit, follow and download; run it again to resume',
    builder: (y) =>
      withManifestFileOptions(withPlanOptions(withSharedOptions(y)))
        .positional('manifest', { type: 'string', demandOption: true })
        .option('concurrency', { type: 'number', default: 8, describe: 'submits in flight at once' })
        .option('wait', { type: 'boolean', default: true, describe: 'follow jobs to the end (--no-wait stops after submitting)' })
        .option('out', { type: 'string', describe: 'results folder (default: <manifest>.out/ beside the manifest)' })
        .option('resubmit-in-doubt', { type: 'boolean', default: false, describe: 'send in-doubt jobs again (they may be paid twice)' })
        .option('partial', { type: 'boolean', default: false, describe: 'over budget: send what fits in manifest order, skip the rest' })
        .option('poll-ms', {
          type: 'number',
          describe: "first status poll after MS for every type, backing off to 6×MS (default: the service's pace, 1.5 s audio, 5 s video)",
        }),
    handler: async (args) => {
      if (!Number.isInteger(args.concurrency) || args.concurrency < 1 || args.concurrency > 64) {
        throw new UsageError(`--concurrency: expected a whole number from 1 to 64, got ${args.concurrency}`);
      }
      const pollMs = args['poll-ms'];
      if (pollMs !== undefined && (!Number.isInteger(pollMs) || pollMs < 10 || pollMs > 600_000)) {
        throw new UsageError(`--poll-ms: expected a whole number of milliseconds from 10 to 600000, got ${pollMs}`);
      }
      const paths = manifestPaths(args.manifest, args.db, args.out);
      if (!existsSync(paths.db)) refuseLostLedger(paths);
      const session = await openWorkSession(args, { lock: true, command: 'run' });
      try {
        // A ledger that records no job may be a new one made since (estimate makes one for its caches).
        if (Object.values(session.ledger.countsByState()).every((n) => n === 0)) refuseLostLedger(paths);
        if (args.wait) await ensureWritableFolder(session.paths.out);
        result.exitCode = await run(session, args);
      } finally {
        await session.close();
      }
    },
  };
}

async function run(session: WorkSession, args: RunArgs): Promise<number> {
  const { ledger, manifest } = session;
  const stopControl = installStopHandlers(logLine);
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
    if (plan.submit.length > 0) await writeRunReports(session.paths, summarize(ledger, session.budgetUsd, manifestIds), false);
    // Jobs the manifest dropped after they were sent are collected too, so they count here.
    const dropped = plan.follow.filter((f) => !manifestIds.has(f.job.id)).length;
    progress = startProgress({
      snapshot: () => ({ counts: ledger.countsByState(), spentUsd: ledger.spentUsd(), budgetUsd: session.budgetUsd }),
      total: manifest.jobs.length + dropped,
      live,
    });
    for (const event of early.splice(0)) progress.onEvent(event);
  };
  // Commits on a thread of their own, so the disk's flushes overlap the requests in flight.
  const writer = threadWriter(ledger.path);
  const ctx = createRunContext({
    client: session.service.client,
    ledger,
    writer,
    pace: paceFor(session, (what, untilMs, reason) => emit({ kind: 'paused', what, untilMs, reason })),
    options: {
      concurrency: args.concurrency,
      budgetUsd: session.budgetUsd,
      noWait: !args.wait,
      resubmitInDoubt: args['resubmit-in-doubt'],
      outDir: session.paths.out,
      poll: pollScheduleFor(args),
      retry: DEFAULT_RETRY,
      maxResultBytes: MAX_RESULT_BYTES,
    },
    stop,
    emit,
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
    progress?.stop();
    stopControl.dispose();
    await writer.close();
  }
  const summary = summarize(ledger, session.budgetUsd, manifestIds);
  await writeRunReports(session.paths, summary, true);
  if (args.json) await writeJson(statusJson(summary));
  else await writeStdout(formatStatusText(summary, { color: useColor(process.stdout) }));
  if (outcome === undefined) {
    logLine(`stopped before the first submit: nothing was sent. Run the same command again to start: mediabatch run ${args.manifest}`);
    return ExitCode.interrupted;
  }
  return finish(outcome, summary.counts, args);
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

function pollScheduleFor(args: RunArgs): RunContext['options']['poll'] {
  const pollMs = args['poll-ms'];
  if (pollMs !== undefined) return pollEvery(pollMs);
  return args.sim ? SIMULATOR_POLL : SERVICE_POLL;
}

function finish(outcome: RunOutcome, counts: Record<string, number>, args: RunArgs): number {
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
  if ((counts['submitted'] ?? 0) > 0) logLine(`some jobs are still running at the service; ${again} to collect them`);
  return ExitCode.incomplete;
}
