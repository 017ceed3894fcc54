import { existsSync, statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { LocalIoError } from '../../errors.js';
import type { Ledger, LedgerIngest } from '../ledger.js';
import { createContext, type Sync } from './context.js';
import { createGraph } from './graph.js';
import { beginIngest } from './ingest.js';
import { createJobRecords } from './jobs.js';
import { asLocalIoError, openDatabase } from './open-database.js';
import { createCaches, createRunLock, createWebhookRecords } from './side-tables.js';
import { createTransitions } from './transitions.js';

/**
 * 'read-only' (`status`, reports) never creates, migrates or writes: a missing file is
 * E_NO_LEDGER, every change a bug. 'read-write' creates and migrates the file. 'scratch' is a
 * throw-away file for one command (estimate's copy while a run holds the ledger): no WAL, no flushes.
 */
export type SqliteLedgerMode = 'read-only' | 'read-write' | 'scratch';

export interface SqliteLedgerOptions {
  mode: SqliteLedgerMode;
  /** Epoch milliseconds; tests pass a clock to age caches. */
  nowMs?: () => number;
}

/** The ledger's methods that the core answers synchronously: all but the handle's lifetime and the ingest. */
type CoreMethods = Omit<Ledger, 'location' | 'readonly' | 'flush' | 'close' | 'beginIngest'>;
type Core = Sync<CoreMethods>;
type Method = (...args: unknown[]) => unknown;

/** One statement over every job, which must be a transaction alone (jobs.ts says why). */
const ALONE: keyof Core = 'applyPrices';
/**
 * Writes, refused on a read-only ledger. Those asked for in one turn share a group commit: an
 * IMMEDIATE transaction, so the write lock is taken before any of them reads, and no other
 * process writes between a write's reads and its writes.
 */
const WRITES: readonly (keyof Core)[] = [
  'skipAfter', 'recoverInterrupted', 'putPrices', 'forgetPrices', 'putCatalogue', 'setMeta', 'addWebhookRun',
  'acquireRunLock', 'reserveForSubmit', 'markSubmitted', 'markNotTaken', 'markRefused', 'markInDoubt', 'markDone',
  'markFailedRemote', 'markSkipped', 'noteUncollected', 'noteStillRunning', 'recordEvent', 'noteWebhookRun',
  'recordDelivery', 'settleBlocked', 'priceForSend',
];

/**
 * Opens the ledger file at `path` (open-database.ts). Every later failure of SQLite's own (disk
 * full, I/O error, locked too long) is a LocalIoError naming the file and what to do, and wrote
 * nothing; errors of ours (an illegal state change: a bug) pass through unchanged.
 */
export async function openSqliteLedger(path: string, options: SqliteLedgerOptions): Promise<Ledger> {
  const readonly = options.mode === 'read-only';
  const db = openDatabase(path, readonly, options.mode === 'scratch');
  const ctx = createContext(db, path, options.nowMs ?? Date.now);
  const lock = createRunLock(ctx);
  const core: Core = {
    ...createJobRecords(ctx),
    ...createTransitions(ctx),
    ...createGraph(ctx),
    ...createCaches(ctx),
    ...createWebhookRecords(ctx),
    ...lock,
    copyTo: (file) => {
      // VACUUM INTO reads what is committed in one transaction: a consistent copy.
      db.prepare('VACUUM INTO ?').run(file);
    },
  };
  const committer = groupCommit(db, path, watchFile(db, path));
  const refused = (what: string): Promise<never> =>
    Promise.reject(new Error(`bug in mediabatch: ${what} on the ledger ${path}, which was opened read-only`));
  const methods = promised(path, core) as unknown as Record<string, Method>;
  for (const name of [ALONE, ...WRITES]) {
    // Inside the group commit's transaction, a savepoint: a write that throws is undone alone.
    const write = db.transaction(core[name] as Method);
    if (readonly) methods[name] = () => refused(name);
    else if (name !== ALONE) methods[name] = (...args) => committer.commit(() => write(...args));
  }

  let closed: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    try {
      await committer.drained();
    } finally {
      // A full disk can refuse even the lock's release: the file still closes, and the failure
      // is the one a person can act on (the next run clears a dead process's lock itself).
      if (db.open) {
        try {
          if (!readonly) await answer(path, lock.releaseRunLock);
        } finally {
          db.close();
        }
      }
    }
  };
  return {
    ...(methods as unknown as CoreMethods),
    location: path,
    readonly,
    beginIngest: () =>
      readonly ? refused('beginIngest') : answer(path, () => promised<LedgerIngest>(path, beginIngest(ctx))),
    flush: () => committer.drained(),
    close: () => (closed ??= close()),
  };
}

/** A synchronous call's answer as a promise, with SQLite's failures as the LocalIoError a person can act on. */
function answer<T>(path: string, fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (error) {
    return Promise.reject(asLocalIoError(path, error));
  }
}

/** The async form of a synchronous part (the ingest's session): each call's answer is already applied. */
function promised<T>(path: string, part: Sync<T>): T {
  const entries = Object.entries(part as Record<string, Method>);
  const methods = entries.map(([name, fn]) => [name, (...args: unknown[]) => answer(path, () => fn(...args))]);
  return Object.fromEntries(methods) as T;
}

/**
 * Group commit on the ledger's own connection: every change asked for in one turn of the event
 * loop joins one IMMEDIATE transaction, and each caller's promise settles only after that
 * transaction has committed. With synchronous=FULL each commit waits for the disk; shared by
 * every change in flight, that wait costs a run little. A batch blocks the event loop while it
 * commits, which keeps the order simple: nothing else runs between a reservation's commit and
 * its answer. Each change is its own savepoint inside the transaction: one that throws is undone
 * alone and reported to its caller, the others still commit. When the transaction itself fails
 * (disk full, I/O error, locked too long, the file gone from its path), nothing in it was
 * written and every caller gets the LocalIoError.
 */
function groupCommit(db: Database.Database, path: string, assertInPlace: () => void) {
  let waiting: { change: () => unknown; resolve: (value: unknown) => void; reject: (error: unknown) => void }[] = [];
  const commitWaiting = (): void => {
    const batch = waiting;
    waiting = [];
    let answers: (() => void)[];
    try {
      // A file deleted or replaced under the run: record nothing more where nobody will find it.
      assertInPlace();
      answers = db.transaction(() =>
        batch.map((w) => {
          try {
            const value = w.change();
            return () => w.resolve(value);
          } catch (error) {
            return () => w.reject(asLocalIoError(path, error));
          }
        }),
      ).immediate();
    } catch (error) {
      const known = asLocalIoError(path, error);
      const message = `cannot write the ledger ${path}: ${(error as Error).message}`;
      const failure = known instanceof LocalIoError ? known : new LocalIoError(message, 'E_LEDGER_WRITE', error);
      for (const w of batch) w.reject(failure);
      return;
    }
    for (const settle of answers) settle();
  };
  return {
    commit: <T>(change: () => T) =>
      new Promise<T>((resolve, reject) => {
        // setImmediate runs once the I/O callbacks of this turn are done: every answer that
        // arrived together is recorded together, and nobody waits on a timer.
        if (waiting.length === 0) setImmediate(commitWaiting);
        waiting.push({ change, resolve: resolve as (value: unknown) => void, reject });
      }),
    /** Settles once every change asked for so far has its answer; immediates run in the order they were set. */
    drained: async () => {
      while (waiting.length > 0) await new Promise((done) => setImmediate(done));
    },
  };
}

/**
 * Keeps watch on the ledger file a connection was opened from. SQLite keeps writing to a file
 * that was deleted (or replaced) under it, so without this a run would go on paying for jobs
 * whose records vanish with the process. Checked before every group commit: a `stat` costs
 * microseconds against a commit's fraction of a millisecond.
 *
 * The check throws E_LEDGER_GONE once the file is no longer at its path, after saving what the
 * connection holds (rescue), so that no record is lost.
 */
function watchFile(db: Database.Database, path: string): () => void {
  const opened = statSync(path);
  let gone: LocalIoError | undefined;
  return () => {
    if (gone !== undefined) throw gone;
    const now = statSync(path, { throwIfNoEntry: false });
    if (now !== undefined && now.dev === opened.dev && now.ino === opened.ino) return;
    gone = rescue(db, path, now === undefined);
    throw gone;
  };
}

function rescue(db: Database.Database, path: string, deleted: boolean): LocalIoError {
  const what = deleted ? 'was deleted' : 'was replaced by another file';
  const target = deleted ? path : freeName(`${path}.rescued`);
  const stopped = `the ledger ${path} ${what} while this run was writing to it: nothing more is sent.`;
  try {
    // VACUUM INTO writes a whole, consistent copy of what this connection sees: the old file's
    // pages and its write-ahead log, both still open although their names are gone.
    db.prepare('VACUUM INTO ?').run(target);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return new LocalIoError(
      `${stopped} Its records could not be saved (${detail}): keep the request ids printed above and this run's report.`,
      'E_LEDGER_GONE',
      error,
    );
  }
  const next = deleted
    ? `Everything it had recorded was written back to ${path}; run the same command again to resume.`
    : `Everything it had recorded was saved as ${target}; move it to ${path} to resume.`;
  return new LocalIoError(`${stopped} ${next}`, 'E_LEDGER_GONE');
}

function freeName(base: string): string {
  for (let n = 1; ; n += 1) {
    const name = n === 1 ? base : `${base}-${n}`;
    if (!existsSync(name)) return name;
  }
}
