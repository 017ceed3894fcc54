import { JOB_STATES } from '../../jobs/states.js';
import { createCaches, type LedgerCaches } from './caches.js';
import { createCollectNotes, type CollectNotes } from './collect-notes.js';
import { createContext } from './context.js';
import { watchFile, type FileWatch } from './file-watch.js';
import { beginIngest, type CoreIngest } from './ingest.js';
import { createJobRecords, type JobRecords } from './jobs.js';
import { asLocalIoError, openDatabase } from './open-database.js';
import { createRunLock, type RunLock } from './run-lock.js';
import { createTransitions, type JobTransitions } from './transitions.js';
import { createWebhookRecords, type WebhookRecords } from './webhooks.js';

export interface OpenCoreOptions {
  /** Never creates, migrates or writes; a missing file is an error. */
  readonly: boolean;
  /** Epoch milliseconds; tests pass a clock to age caches without waiting. */
  nowMs?: (() => number) | undefined;
  /** A throw-away file (openSqliteLedger's 'scratch' mode): no durability asked of it. */
  scratch?: boolean | undefined;
}

/**
 * The SQLite ledger on one connection, synchronous: each method is its own transaction. The
 * async Ledger (sqlite-ledger.ts) runs on one.
 */
export interface SqliteCore extends JobRecords, JobTransitions, CollectNotes, LedgerCaches, WebhookRecords, RunLock, FileWatch {
  readonly path: string;
  readonly readonly: boolean;
  /**
   * Runs `fn` in one IMMEDIATE transaction: the calls inside it commit together (each becomes
   * a savepoint, so one that throws is undone alone). One commit for many state changes is
   * what lets a run of thousands of jobs keep synchronous=FULL.
   */
  batch<T>(fn: () => T): T;
  /** Opens the ingest's transaction on this connection (ingest.ts). */
  beginIngest(): CoreIngest;
  /** What is committed, into a new file (VACUUM INTO reads it in one transaction: a consistent copy). */
  copyTo(file: string): void;
  /** Releases the run lock if held, then closes the file. Safe to call twice. */
  close(): void;
}

export function openCore(path: string, options: OpenCoreOptions): SqliteCore {
  const { readonly } = options;
  const db = openDatabase(path, readonly, options.scratch ?? false);
  const ctx = createContext(db, path, options.nowMs ?? Date.now);
  const lock = createRunLock(ctx);
  // The first write: another process holding the file's write lock is found here. The states
  // a job may be in are rows (migration 5): this version's list is added to what the file has.
  // The running total is kept by triggers; recomputing it once per open costs one scan.
  if (!readonly) {
    try {
      db.transaction(() => {
        const addState = db.prepare('INSERT OR IGNORE INTO job_states (name) VALUES (?)');
        for (const state of JOB_STATES) addState.run(state);
        db.prepare('UPDATE spend_total SET spent_micro = (SELECT COALESCE(SUM(spent_micro), 0) FROM jobs) WHERE id = 1').run();
      }).immediate();
    } catch (error) {
      db.close();
      throw asLocalIoError(path, error);
    }
  }
  const core: SqliteCore = {
    path,
    readonly,
    ...createJobRecords(ctx),
    ...createTransitions(ctx),
    ...createCollectNotes(ctx),
    ...createCaches(ctx),
    ...createWebhookRecords(ctx),
    ...lock,
    ...watchFile(db, path),
    batch: <T>(fn: () => T): T => db.transaction(fn).immediate(),
    beginIngest: () => withLedgerErrors(path, beginIngest(ctx)),
    copyTo: (file) => {
      db.prepare('VACUUM INTO ?').run(file);
    },
    close: () => {
      if (!db.open) return;
      if (!readonly) lock.releaseRunLock();
      db.close();
    },
  };
  return withLedgerErrors(path, core);
}

/**
 * Every method, with SQLite's own failures (disk full, I/O error, locked too long) turned into
 * the LocalIoError a person can act on. A failed statement wrote nothing: its transaction was
 * rolled back. Errors of ours (an illegal state change: a bug) pass through unchanged.
 */
function withLedgerErrors<T extends object>(path: string, core: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(core)) {
    wrapped[name] =
      typeof value !== 'function'
        ? value
        : (...args: unknown[]): unknown => {
            try {
              return (value as (...a: unknown[]) => unknown)(...args);
            } catch (error) {
              throw asLocalIoError(path, error);
            }
          };
  }
  return wrapped as T;
}
