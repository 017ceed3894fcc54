import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, UsageError } from '../errors.js';
import { LedgerLockedError, openSqliteLedger, type Ledger, type LockHolder, type SqliteLedgerMode } from '../store/index.js';
import { manifestPaths } from './options.js';
import type { Clock } from '../clock.js';

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
 * The ledger of a manifest, for a command that only reads it (`status`, `log`): never created
 * (none yet is a usage error, exit 2), opened read-only, and refused for another manifest.
 */
export async function openLedgerToRead(manifestArg: string, dbArg: string | undefined): Promise<Ledger> {
  const paths = manifestPaths(manifestArg, dbArg);
  if (!existsSync(paths.db)) {
    throw new UsageError(`no ledger at ${paths.db}: nothing has been run for ${manifestArg} yet (or pass --db PATH)`);
  }
  const ledger = await openLedgerFor(paths.db, 'read-only');
  try {
    await claimLedger(ledger, paths.manifest);
    return ledger;
  } catch (error) {
    await ledger.close();
    throw error;
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
export async function claimLedger(ledger: Ledger, manifestPath: string): Promise<void> {
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
export async function tryRunLock(ledger: Ledger, holder: LockHolder): Promise<LockHolder | undefined> {
  try {
    await ledger.acquireRunLock(holder);
    return undefined;
  } catch (error) {
    if (error instanceof LedgerLockedError) return error.holder;
    throw error;
  }
}
