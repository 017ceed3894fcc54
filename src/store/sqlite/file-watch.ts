import { existsSync, statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { LocalIoError } from '../../errors.js';

/**
 * Keeps watch on the ledger file a connection was opened from. SQLite keeps writing to a file
 * that was deleted (or replaced) under it, so without this a run would go on paying for jobs
 * whose records vanish with the process. Checked before every group commit: a `stat` costs
 * microseconds against a commit's fraction of a millisecond.
 *
 * The check throws LocalIoError E_LEDGER_GONE when the file is no longer at its path. The first
 * time it finds the file gone, it writes what the connection holds (everything committed so
 * far) back to the path, or beside it when another file took its place, so that no record is lost.
 */
export function watchFile(db: Database.Database, path: string): () => void {
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
