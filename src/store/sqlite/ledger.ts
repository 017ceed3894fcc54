import { createCaches, type LedgerCaches } from './caches.js';
import { createCollectNotes, type CollectNotes } from './collect-notes.js';
import { createContext } from './context.js';
import { watchFile, type FileWatch } from './file-watch.js';
import { createJobRecords, type JobRecords } from './jobs.js';
import { asLocalIoError, openDatabase } from './open-database.js';
import { createRunLock, type RunLock } from './run-lock.js';
import { createTransitions, type JobTransitions } from './transitions.js';

export interface OpenLedgerOptions {
  /** For `status`: never creates, migrates or writes; a missing file is an error. */
  readonly?: boolean;
  /** Epoch milliseconds; tests pass a clock to age caches without waiting. */
  nowMs?: () => number;
}

/**
 * The ledger of one manifest: every job, its state and what it cost, the event log, caches
 * and the run lock. All methods are synchronous and each one is its own transaction.
 * Nothing here takes a token, so none can end up in the file.
 */
export interface Ledger extends JobRecords, JobTransitions, CollectNotes, LedgerCaches, RunLock, FileWatch {
  readonly path: string;
  readonly readonly: boolean;
  /**
   * Runs `fn` in one IMMEDIATE transaction: the ledger calls inside it commit together (each
   * becomes a savepoint, so one that throws is undone alone). One commit for many state
   * changes is what lets a run of thousands of jobs keep synchronous=FULL.
   */
  batch<T>(fn: () => T): T;
  /** Releases the run lock if held, then closes the file. Safe to call twice. */
  close(): void;
}

export function openLedger(path: string, options: OpenLedgerOptions = {}): Ledger {
  const readonly = options.readonly ?? false;
  const db = openDatabase(path, readonly);
  const ctx = createContext(db, path, options.nowMs ?? Date.now);
  const lock = createRunLock(ctx);
  // The running total is kept by triggers; recomputing it once per open clears any float drift.
  // It is the first write: another process holding the file's write lock is found here.
  if (!readonly) {
    try {
      db.prepare('UPDATE spend_total SET spent_usd = (SELECT TOTAL(spent_usd) FROM jobs) WHERE id = 1').run();
    } catch (error) {
      db.close();
      throw asLocalIoError(path, error);
    }
  }
  const ledger: Ledger = {
    path,
    readonly,
    ...createJobRecords(ctx),
    ...createTransitions(ctx),
    ...createCollectNotes(ctx),
    ...createCaches(ctx),
    ...lock,
    ...watchFile(db, path),
    batch: <T>(fn: () => T): T => db.transaction(fn).immediate(),
    close: () => {
      if (!db.open) return;
      if (!readonly) lock.releaseRunLock();
      db.close();
    },
  };
  return withLedgerErrors(ledger);
}

/**
 * Every method, with SQLite's own failures (disk full, I/O error, locked too long) turned into
 * the LocalIoError a person can act on. A failed statement wrote nothing: its transaction was
 * rolled back. Errors of ours (an illegal state change: a bug) pass through unchanged.
 */
function withLedgerErrors(ledger: Ledger): Ledger {
  const wrapped: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(ledger)) {
    wrapped[name] =
      typeof value !== 'function'
        ? value
        : (...args: unknown[]): unknown => {
            try {
              return (value as (...a: unknown[]) => unknown)(...args);
            } catch (error) {
              throw asLocalIoError(ledger.path, error);
            }
          };
  }
  return wrapped as unknown as Ledger;
}
