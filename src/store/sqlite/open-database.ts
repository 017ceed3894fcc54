import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { LocalIoError } from '../../errors.js';
import { JOB_STATES } from '../../jobs/states.js';
import { MIGRATIONS, SCHEMA_VERSION } from './schema.js';

type Db = Database.Database;

/** How long a statement waits for another process's write lock before giving up. */
const BUSY_TIMEOUT_MS = 5000;
/**
 * SQLite's page cache, in KiB (a negative cache_size), taken only as pages are used. Its 2 MB
 * default holds little of the id indexes of a big manifest, and each job recorded then reads
 * pages back from the file; a larger one must still keep a million-row source under the memory
 * goal (npm run bench).
 */
const CACHE_KIB = 32 * 1024;

/**
 * Opens (and, unless read-only, creates and migrates) the ledger file; a scratch one (thrown
 * away after one command) without durability. Every way the file can be unusable ends in a
 * LocalIoError naming the file, what is wrong and what to do.
 */
export function openDatabase(path: string, readonly: boolean, scratch = false): Db {
  if (readonly && !existsSync(path)) throw noLedger(path);
  // Checked before SQLite opens it: on a read-only ledger SQLite falls back to reading, and in
  // WAL mode leaves -wal and -shm files behind with the ledger's read-only permissions.
  const readOnly = readonly ? [] : readOnlyFiles(path);
  if (readOnly.length > 0) throw readOnlyLedger(path, readOnly);
  let db: Db;
  try {
    db = new Database(path, { readonly, fileMustExist: readonly });
  } catch (error) {
    // better-sqlite3 reports a missing folder as a plain TypeError, before SQLite is involved.
    throw error instanceof Database.SqliteError ? asLocalIoError(path, error) : cannotOpen(path, error);
  }
  try {
    configure(db, readonly, scratch);
    // A reader changes nothing: a damaged page it reads fails that read (with the same message,
    // asLocalIoError), and the next command that writes checks the whole file before it spends.
    if (!readonly) checkIntegrity(db, path);
    migrate(db, path, readonly);
    if (!readonly) prepareToWrite(db);
    return db;
  } catch (error) {
    db.close();
    throw asLocalIoError(path, error);
  }
}

function configure(db: Db, readonly: boolean, scratch: boolean): void {
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma('foreign_keys = ON');
  db.pragma(`cache_size = -${CACHE_KIB}`);
  if (scratch) {
    // A file of its own, thrown away after one command (estimate's copy): nothing in it is
    // worth a disk flush.
    db.pragma('journal_mode = MEMORY');
    db.pragma('synchronous = OFF');
    return;
  }
  // WAL lets `status` read while a run writes. The mode is stored in the file, so a read-only
  // connection inherits it and must not try to set it.
  if (!readonly) db.pragma('journal_mode = WAL');
  // In WAL mode NORMAL may lose the last commits on a power cut (they are only durable at the
  // next checkpoint). A lost `submitting` row would come back as `pending` and be sent, and
  // paid for, a second time; FULL syncs the WAL on every commit, before the request leaves.
  db.pragma('synchronous = FULL');
}

function checkIntegrity(db: Db, path: string): void {
  // quick_check skips index-content verification, so it stays cheap on big ledgers while still
  // catching truncated or overwritten pages before we trust the spend recorded in them.
  const problems = (db.pragma('quick_check') as { quick_check: string }[]).map((row) => row.quick_check);
  if (problems.length === 1 && problems[0] === 'ok') return;
  throw corrupt(path, problems.slice(0, 3).join('; '));
}

function migrate(db: Db, path: string, readonly: boolean): void {
  const found = userVersion(db);
  if (found > SCHEMA_VERSION) {
    throw new LocalIoError(
      `ledger ${path} was written by a newer mediabatch (schema version ${found}, this one knows up to ${SCHEMA_VERSION}): upgrade mediabatch to use it`,
      'E_LEDGER_NEWER',
    );
  }
  if (found === SCHEMA_VERSION) return;
  if (readonly) {
    if (found === 0) throw noLedger(path);
    throw new LocalIoError(
      `ledger ${path} has schema version ${found}, older than ${SCHEMA_VERSION}: run \`mediabatch run\` once to upgrade it`,
      'E_LEDGER_OLD',
    );
  }
  // A migration may rebuild a table others reference (SQLite's procedure: foreign keys off, which
  // cannot change inside a transaction; checked by foreign_key_check before each commit).
  db.pragma('foreign_keys = OFF');
  for (const migration of MIGRATIONS) {
    // Re-read inside the write lock: another process may have migrated while we waited for it.
    db.transaction(() => {
      if (userVersion(db) >= migration.version) return;
      db.exec(migration.sql);
      const broken = db.pragma('foreign_key_check') as unknown[];
      if (broken.length > 0) throw corrupt(path, `migration ${migration.version} found ${broken.length} broken reference(s)`);
      db.pragma(`user_version = ${migration.version}`);
    }).immediate();
  }
  db.pragma('foreign_keys = ON');
}

/**
 * The first write when no migration was due: another process holding the file's write lock is
 * found here. The states a job may be in are rows (migration 5): this version's list is added to
 * what the file has. The running total is kept by triggers; recomputing it once per open costs
 * one scan.
 */
function prepareToWrite(db: Db): void {
  db.transaction(() => {
    const addState = db.prepare('INSERT OR IGNORE INTO job_states (name) VALUES (?)');
    for (const state of JOB_STATES) addState.run(state);
    db.prepare('UPDATE spend_total SET spent_micro = (SELECT COALESCE(SUM(spent_micro), 0) FROM jobs) WHERE id = 1')
      .run();
  }).immediate();
}

function userVersion(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number;
}

function noLedger(path: string): LocalIoError {
  return new LocalIoError(`no ledger at ${path}: nothing has been run for this manifest yet`, 'E_NO_LEDGER');
}

function corrupt(path: string, detail: string, cause?: unknown): LocalIoError {
  const forgets = 'which forgets what was already submitted and paid for';
  const next = `restore it from a backup, or move it aside to start a new ledger, ${forgets}`;
  const message = `ledger ${path} is not a usable SQLite database (${detail}): ${next}`;
  return new LocalIoError(message, 'E_LEDGER_CORRUPT', cause);
}

/** SQLite codes a file or folder the user may not write can cause (the -shm file's show as I/O errors). */
const MAYBE_PERMISSIONS = /^SQLITE_(READONLY|CANTOPEN|PERM|IOERR)/;

/** A SQLite failure as the LocalIoError the user can act on (busy, corrupt, unopenable); anything else unchanged. */
export function asLocalIoError(path: string, error: unknown): unknown {
  if (error instanceof LocalIoError) return error;
  if (!(error instanceof Database.SqliteError)) return error;
  const { code, message } = error;
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_IOERR_SHORT_READ') {
    return corrupt(path, message, error);
  }
  // SQLite says only "readonly database" or "unable to open": which file or folder it is matters.
  const permission = MAYBE_PERMISSIONS.test(code) ? permissionProblem(path, error) : undefined;
  if (permission !== undefined) return permission;
  const again = 'then run the same command again (a job caught mid-submit is then marked in doubt)';
  if (code === 'SQLITE_FULL') {
    const full = `no space left on the device holding the ledger (${message}): free space there`;
    return new LocalIoError(`cannot write the ledger ${path}: ${full}, ${again}`, 'E_LEDGER_FULL', error);
  }
  if (code.startsWith('SQLITE_IOERR')) {
    const fix = 'free disk space or fix the disk';
    return new LocalIoError(`cannot write the ledger ${path} (${message}): ${fix}, ${again}`, 'E_LEDGER_WRITE', error);
  }
  if (code === 'SQLITE_BUSY') {
    const waited = `stayed locked by another process for ${BUSY_TIMEOUT_MS / 1000} s`;
    return new LocalIoError(`ledger ${path} ${waited}: wait for it to finish and try again`, 'E_LEDGER_BUSY', error);
  }
  return cannotOpen(path, error);
}

function writable(file: string): boolean {
  try {
    accessSync(file, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** The ledger's files (itself, its -wal and -shm) that exist but may not be written. */
function readOnlyFiles(path: string): string[] {
  return [path, `${path}-wal`, `${path}-shm`].filter((file) => existsSync(file) && !writable(file));
}

function readOnlyLedger(path: string, files: readonly string[], cause?: unknown): LocalIoError {
  const what = files.length === 1 ? `ledger ${files[0] ?? path} is` : `ledger files ${files.join(', ')} are`;
  const fix = `make ${files.length === 1 ? 'it' : 'them'} writable (chmod u+w ${files.join(' ')})`;
  const message = `${what} read-only: ${fix}, or pass --db PATH to use another ledger`;
  return new LocalIoError(message, 'E_LEDGER_READONLY', cause);
}

/**
 * A ledger file (or its -wal or -shm) the user may not write, or a folder where SQLite cannot
 * make them: each its own message, since the fixes differ. Undefined when permissions allow it.
 */
function permissionProblem(path: string, cause: unknown): LocalIoError | undefined {
  const readOnly = readOnlyFiles(path);
  if (readOnly.length > 0) return readOnlyLedger(path, readOnly, cause);
  const folder = dirname(path);
  if (existsSync(folder) && !writable(folder)) {
    const why = `the folder ${folder} is not writable (SQLite keeps the ledger's -wal and -shm files beside it)`;
    const fix = "fix the folder's permissions, or pass --db PATH in a writable folder";
    return new LocalIoError(`cannot create or write the ledger ${path}: ${why}; ${fix}`, 'E_LEDGER_FOLDER', cause);
  }
  return undefined;
}

function cannotOpen(path: string, error: unknown): LocalIoError {
  const detail = error instanceof Error ? error.message : String(error);
  const next = 'check that the folder exists and is writable';
  return new LocalIoError(`ledger ${path} cannot be opened (${detail}): ${next}`, 'E_LEDGER_OPEN', error);
}
