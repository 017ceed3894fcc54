import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, UsageError } from '../errors.js';
import { STDIN_MANIFEST } from '../manifest/open.js';
import { LedgerLockedError, openSqliteLedger } from '../store/index.js';
import type { Ledger, LedgerHandle, LockHolder, SqliteLedgerMode, TransitionLedger } from '../store/index.js';
import type { Clock } from '../clock.js';

/**
 * Files that live beside a manifest `<dir>/<name>.yaml`: ledger, results folder, reports. A
 * ledger given with `--db` names the results folder and the reports instead (`--db x.mediabatch.db`:
 * `x.out/`, `x.run.json` beside the manifest): `a.yaml` and `a.yml` in one folder, or two
 * ledgers of one manifest, then never share a folder or overwrite each other's reports.
 */
export function manifestPaths(manifestArg: string, dbArg?: string, outArg?: string) {
  const manifest = path.resolve(manifestArg);
  requireNamesForStdin({ manifest: manifestArg, db: dbArg }, false);
  // Jobs from stdin keep their reports beside the ledger they were given.
  const dir = path.dirname(manifestArg === STDIN_MANIFEST && dbArg !== undefined ? path.resolve(dbArg) : manifest);
  const name = dbArg === undefined ? path.basename(manifest).replace(/\.ya?ml$/i, '') : ledgerStem(dbArg);
  return {
    manifest,
    db: path.resolve(dbArg ?? path.join(dir, `${name}.mediabatch.db`)),
    out: path.resolve(outArg ?? path.join(dir, `${name}.out`)),
    // Written by `estimate` only.
    estimateJson: path.join(dir, `${name}.estimate.json`),
    estimateCsv: path.join(dir, `${name}.estimate.csv`),
    estimateGroupsCsv: path.join(dir, `${name}.estimate.groups.csv`),
    estimateMd: path.join(dir, `${name}.estimate.md`),
    // Written by `run` only: before its first submit (the trace of sent requests that outlives a
    // lost ledger) and again at its end.
    runJson: path.join(dir, `${name}.run.json`),
    runCsv: path.join(dir, `${name}.run.csv`),
    // What mediabatch 0.1 wrote for both: still read as a trace of a run.
    legacyReport: path.join(dir, `${name}.report.json`),
    // The review page: written by `report`, and by `run` when it ends.
    reportHtml: path.join(dir, `${name}.report.html`),
  };
}

/** `x.mediabatch.db` → `x`; `x.db` → `x`; `x` → `x`. */
function ledgerStem(db: string): string {
  const base = path.basename(db);
  return base.replace(/\.mediabatch\.db$/i, '').replace(/\.[^.]*$/, '') || base;
}

/**
 * Jobs read from stdin (the manifest `-`) have no file to name the ledger, the results folder and
 * the reports after: the ledger must be given (`--db`), and for a run the results folder (`--out`).
 */
export function requireNamesForStdin(args: { manifest: string; db?: string | undefined; out?: string | undefined }, run: boolean): void {
  if (args.manifest !== STDIN_MANIFEST) return;
  const missing = [args.db === undefined ? '--db PATH' : undefined, run && args.out === undefined ? '--out DIR' : undefined].filter((flag) => flag !== undefined);
  if (missing.length === 0) return;
  throw new UsageError(`reading jobs from stdin (the manifest -) needs ${missing.join(' and ')}: there is no manifest file to name ${run ? 'them' : 'it'} after`);
}

/**
 * Opens the ledger file: 'read-only' for status; 'read-write' (creating it and its folder if
 * needed) for run, validate and estimate. `clock` dates what the ledger records (the system's
 * when not given).
 */
export function openLedgerFor(file: string, mode: SqliteLedgerMode, clock?: Clock): Promise<Ledger> {
  if (mode !== 'read-only') mkdirSync(path.dirname(file), { recursive: true });
  return openSqliteLedger(file, { mode, nowMs: clock === undefined ? undefined : () => clock.nowMs() });
}

/**
 * Runs `work` on the ledger of a manifest, for a command that only reads it (`status`, `log`,
 * `report`): never created (none yet is a usage error, exit 2), opened read-only, refused for
 * another manifest, and closed however `work` ends.
 */
export async function withLedgerToRead<T>(
  manifestArg: string,
  dbArg: string | undefined,
  work: (ledger: Ledger) => Promise<T>,
): Promise<T> {
  const paths = manifestPaths(manifestArg, dbArg);
  if (!existsSync(paths.db)) {
    throw new UsageError(`no ledger at ${paths.db}: nothing has been run for ${manifestArg} yet (or pass --db PATH)`);
  }
  const ledger = await openLedgerFor(paths.db, 'read-only');
  try {
    await claimLedger(ledger, paths.manifest);
    return await work(ledger);
  } finally {
    await ledger.close();
  }
}

const MANIFEST_KEY = 'manifest_path';

/**
 * A ledger belongs to the manifest it was made for: its spend, its request ids and its results
 * folder are that manifest's. Used for another manifest (`a.yml` beside `a.yaml` share a
 * default ledger name; `--db` pointing at another's ledger), a run would report, and resume,
 * jobs that are not its own. Refused while the manifest the ledger was made for still exists;
 * when that file is gone (a folder moved or renamed), the ledger follows its manifest.
 */
export async function claimLedger(
  ledger: LedgerHandle & Pick<TransitionLedger, 'recordEvent'>,
  manifestPath: string,
): Promise<void> {
  const current = realPath(manifestPath);
  const recorded = await ledger.getMeta(MANIFEST_KEY);
  if (recorded === current) return;
  if (recorded !== undefined && existsSync(recorded) && realPath(recorded) !== current) {
    throw new ConfigError(
      `the ledger ${ledger.location} belongs to the manifest ${recorded}, not to ${current}: give this manifest a ledger of its own with --db PATH (its results folder and reports take that ledger's name), or run ${recorded}. Nothing was sent.`,
      'E_LEDGER_OTHER_MANIFEST',
    );
  }
  if (ledger.readonly) return;
  await ledger.setMeta(MANIFEST_KEY, current);
  if (recorded !== undefined) await ledger.recordEvent(null, 'manifest_moved', { from: recorded, to: current });
}

function realPath(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

/**
 * Removes a ledger this command created and recorded nothing in (the manifest turned out
 * invalid, or the command could not start): an empty ledger left behind would look like a
 * manifest that was never run, and hide nothing worth keeping.
 */
export async function discardLedger(file: string): Promise<void> {
  for (const suffix of ['', '-wal', '-shm']) await rm(`${file}${suffix}`, { force: true });
}

/**
 * A command that writes the ledger but sends nothing (estimate) holds the run lock while it
 * works, as a run does: a run's job list must never change under it. While another mediabatch
 * holds the lock, the command gets a copy of the ledger taken now instead (in a temporary folder
 * that closing the copy removes), and the ledger itself is left untouched; `onCopy` names the holder.
 */
export async function lockedOrCopy(ledger: Ledger, holder: LockHolder, onCopy: (busy: LockHolder) => void): Promise<Ledger> {
  const busy = await tryRunLock(ledger, holder);
  if (busy === undefined) return ledger;
  onCopy(busy);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mediabatch-copy-'));
  const removeDir = () => rm(dir, { recursive: true, force: true });
  try {
    const file = path.join(dir, path.basename(ledger.location));
    await ledger.copyTo(file);
    await ledger.close();
    const copy = await openLedgerFor(file, 'scratch');
    return { ...copy, close: () => copy.close().finally(removeDir) };
  } catch (error) {
    await removeDir();
    throw error;
  }
}

/** Takes the run lock for `holder`; answers who holds it instead, if another live process does. */
export async function tryRunLock(
  ledger: Pick<LedgerHandle, 'acquireRunLock'>,
  holder: LockHolder,
): Promise<LockHolder | undefined> {
  try {
    await ledger.acquireRunLock(holder);
    return undefined;
  } catch (error) {
    if (error instanceof LedgerLockedError) return error.holder;
    throw error;
  }
}

/** What an estimate says when it works on a copy of a ledger `busy` holds. */
export function copyNote(file: string, busy: LockHolder, command: string): string {
  return `the ledger ${file} is in use by mediabatch pid ${busy.pid} on ${busy.host} (${busy.command}): this ${command} works on a copy of it taken now and leaves the ledger itself untouched`;
}
