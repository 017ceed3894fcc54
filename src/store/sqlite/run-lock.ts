import type { StoreContext, Sync } from './context.js';
import { holderIsAlive, LedgerLockedError, type LedgerHandle, type LockHolder } from '../ledger.js';

type LockRow = LockHolder & { started_at: string };

/** The run lock (LedgerHandle.acquireRunLock); releasing drops it only if this pid on this host holds it. */
export function createRunLock(ctx: StoreContext): Sync<Pick<LedgerHandle, 'acquireRunLock' | 'releaseRunLock'>> {
  const { db } = ctx;
  const selectLock = db.prepare<[], LockRow>('SELECT pid, host, started_at, command FROM run_lock WHERE id = 1');
  const replaceLock = db.prepare(
    `INSERT OR REPLACE INTO run_lock (id, pid, host, started_at, command) VALUES (1, @pid, @host, @now, @command)`,
  );
  const deleteLock = db.prepare('DELETE FROM run_lock WHERE id = 1 AND pid = ? AND host = ?');
  let held: LockHolder | undefined;

  return {
    // The read and the write happen under one IMMEDIATE write lock (sqlite-ledger.ts, WRITES):
    // two runs starting at the same moment cannot both see the lock free.
    acquireRunLock: (holder) => {
      const current = selectLock.get();
      if (current !== undefined) {
        if (holderIsAlive(current, holder.host)) throw locked(ctx.path, current);
        const { pid, host, started_at: since, command } = current;
        ctx.insertEvent(null, 'lock_taken_over', null, null, { deadPid: pid, host, since, command });
      }
      replaceLock.run({ ...holder, now: ctx.nowIso() });
      const { pid, host, command } = holder;
      ctx.insertEvent(null, 'lock_acquired', null, null, { pid, host, command });
      held = holder;
    },
    releaseRunLock: () => {
      if (held === undefined) return;
      deleteLock.run(held.pid, held.host);
      held = undefined;
    },
  };
}

function locked(path: string, lock: LockRow): LedgerLockedError {
  return new LedgerLockedError(
    `ledger ${path} is in use by mediabatch pid ${lock.pid} on ${lock.host} since ${lock.started_at} (${lock.command}): wait for it to finish or stop it; if it is not running, delete the lock with: sqlite3 "${path}" "DELETE FROM run_lock"`,
    { pid: lock.pid, host: lock.host, command: lock.command },
  );
}
