import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemClock } from '../clock.js';
import { ExitCode, MediabatchError } from '../errors.js';
import type { Manifest } from '../manifest/open.js';
import type { CostReport } from '../pricing/report.js';
import * as runner from '../runner/index.js';
import { writeEstimateReports } from '../runner/reports.js';
import { estimateSettings, requireNames, runSettings, serviceAddress } from './call-options.js';
import type { EstimateOptions, RunOptions, ValidateOptions } from './call-options.js';
import { EventFeed } from './events.js';
import { copyNote, manifestPaths, openLedgerFor, tryRunLock } from './ledger.js';
import { openManifestInput, type ManifestInput } from './manifest-input.js';
import { openService, withWork, type ServiceSession, type Work, type WorkRequest } from './session.js';

/**
 * Checks every job of a manifest and reports every problem at once (a ManifestError carrying
 * each, located); with `token` or `sim`, against the service's catalogue too (models, voices,
 * bounds), unless `offline`. Sends no generation request.
 */
export async function validate(
  input: ManifestInput,
  options: ValidateOptions = {},
): Promise<{ jobs: number; offline: boolean }> {
  const { manifest, arg } = await openManifestInput(input, options.allowOutsideFiles);
  const offline = options.offline === true || (options.sim !== true && options.token === undefined);
  if (offline) return { jobs: (await runner.check({ manifest })).jobs, offline };
  const service = await openService(serviceAddress(options));
  try {
    return { jobs: await checkWithCatalogue(manifest, { manifestArg: arg, db: options.db }, service), offline };
  } finally {
    await service.close();
  }
}

/**
 * The check against the catalogue, cached in the manifest's own ledger. Not for jobs from no file
 * without a `db` (no ledger is theirs), nor while a run holds the ledger (nothing else may write
 * it): the catalogue is then fetched and not kept.
 */
export async function checkWithCatalogue(
  manifest: Manifest,
  at: { manifestArg: string; db?: string | undefined },
  service: ServiceSession,
): Promise<number> {
  const file = at.manifestArg === '-' && at.db === undefined ? undefined : manifestPaths(at.manifestArg, at.db).db;
  const ledger = file === undefined ? undefined : await openLedgerFor(file, 'read-write');
  try {
    const busy = ledger && (await tryRunLock(ledger, { pid: process.pid, host: os.hostname(), command: 'validate' }));
    const cache = busy === undefined ? ledger : undefined;
    const { client, baseUrl } = service;
    return (await runner.check({ manifest, service: { client, baseUrl, ledger: cache } })).jobs;
  } finally {
    await ledger?.close();
  }
}

/**
 * Prices every job (cached prices cost no call) and writes the estimate's reports beside the
 * ledger, as `mediabatch estimate` does. Over the budget is no error: `withinBudget` says it.
 * Sends no generation request.
 */
export async function estimate(input: ManifestInput, options: EstimateOptions = {}): Promise<CostReport> {
  const asked = estimateSettings(options);
  requireNames(input, options, false);
  const events = guardedEvents(options);
  return withWork(await workRequest(input, options, false, events.emit), async (work) => {
    const estimated = runner.estimate({ ...asked, ...parts(work), signal: events.signal, onEvent: events.emit });
    const { report, jobs } = await estimated.catch((error: unknown) => {
      events.throwIfFailed();
      throw error;
    });
    await writeEstimateReports(work.paths, report, jobs, path.basename(work.paths.manifest));
    return report;
  });
}

/** What a run ended with: the runner's result, and the exit code the CLI would give it. */
export type RunSummary = runner.RunResult & { exitCode: 0 | 1 | 130 };

/** A run in progress: awaited, its summary (or its error); `events`, what happens as it happens. */
export type RunHandle = Promise<RunSummary> & { events: AsyncIterable<runner.RunEvent> };

/**
 * Estimates, enforces the budget, submits exactly once, follows and downloads, every outcome
 * committed to the ledger as it happens; calling it again resumes. Rejects with what ends a run
 * early: the budget (BudgetError), the token (AuthError), the balance, the ledger, the disk.
 */
export function run(input: ManifestInput, options: RunOptions = {}): RunHandle {
  const feed = new EventFeed<runner.RunEvent>();
  // Begun on the next turn: a `for await` over `events` written right after the call misses nothing.
  const started = new Promise<void>((resolve) => setImmediate(resolve));
  const done = started.then(() => runNow(input, options, feed)).finally(() => feed.end());
  return Object.assign(done, { events: feed });
}

async function runNow(input: ManifestInput, options: RunOptions, feed: EventFeed<runner.RunEvent>) {
  const asked = runSettings(options);
  requireNames(input, options, true);
  const events = guardedEvents(options, (event) => feed.push(event));
  const request = await workRequest(input, options, true, events.emit);
  const paths = manifestPaths(request.manifestArg, options.db, options.out);
  // Before the ledger is opened (which would create an empty one) as well as after, in run().
  if (!existsSync(paths.db)) runner.refuseLostLedger(paths);
  return withWork(request, async (work) => {
    const onEvent = (event: runner.RunEvent): void => {
      // Under `sim` the simulator in this process delivers to the receiver, wherever it bound.
      if (event.kind === 'webhooks_listening') work.service.simulator?.setWebhookTarget(`http://${event.address}`);
      events.emit(event);
    };
    const ran = await runner.run({ ...asked, ...parts(work), files: work.paths, signal: events.signal, onEvent });
    events.throwIfFailed();
    const fatal = ran.outcome?.execute.fatal;
    // The typed error itself (AuthError, a balance's ValidationError, LocalIoError), not its wrapper.
    if (fatal !== undefined) throw fatal.cause instanceof MediabatchError ? fatal.cause : fatal;
    return { ...ran, exitCode: exitCodeOf(ran) };
  });
}

/** The exit code the CLI gives a run that ended without an error: 130 stopped, 1 incomplete, 0 all (picked) done. */
export function exitCodeOf(ran: runner.RunResult): RunSummary['exitCode'] {
  const execute = ran.outcome?.execute;
  if (execute === undefined || execute.stoppedBySignal) return ExitCode.interrupted;
  if (execute.dailyLimitUntilMs !== undefined) return ExitCode.incomplete;
  const counts: Record<string, number> = ran.summary.counts;
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const allDone = ran.picked === undefined ? (counts['done'] ?? 0) === total : ran.picked.done === ran.picked.jobs;
  return allDone ? ExitCode.ok : ExitCode.incomplete;
}

function parts(work: Work) {
  return { manifest: work.manifest, ledger: work.ledger, service: work.service };
}

async function workRequest(
  input: ManifestInput,
  options: RunOptions,
  run: boolean,
  emit: (event: runner.RunEvent) => void,
): Promise<WorkRequest> {
  const { manifest, arg } = await openManifestInput(input, options.allowOutsideFiles);
  const command = run ? 'run' : 'estimate';
  return {
    manifest,
    manifestArg: arg,
    db: options.db,
    out: options.out,
    run,
    command,
    clock: systemClock,
    address: () => serviceAddress(options),
    onCopy: (busy) => emit({ kind: 'warning', message: copyNote(manifestPaths(arg, options.db).db, busy, command) }),
  };
}

/**
 * The caller's event callback, and the feed: a callback that throws stops the work as the
 * caller's own signal would (nothing more is sent, nothing is left in doubt), and the call then
 * rejects with that error.
 */
function guardedEvents(options: EstimateOptions, feed?: (event: runner.RunEvent) => void) {
  const halt = new AbortController();
  let failure: { error: unknown } | undefined;
  const emit = (event: runner.RunEvent): void => {
    feed?.(event);
    if (failure !== undefined) return;
    try {
      options.onEvent?.(event);
    } catch (error) {
      failure = { error };
      halt.abort(error);
    }
  };
  return {
    emit,
    signal: options.signal === undefined ? halt.signal : AbortSignal.any([options.signal, halt.signal]),
    throwIfFailed: (): void => {
      if (failure !== undefined) throw failure.error;
    },
  };
}
