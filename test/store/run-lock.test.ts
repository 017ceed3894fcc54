import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { hostname } from 'node:os';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { useTempLedgers } from './helpers.js';

const HOST = hostname();

/** Writes a lock row as another mediabatch process would have. */
function writeLock(path: string, pid: number, host: string): void {
  const db = new Database(path);
  db.prepare(
    "INSERT OR REPLACE INTO run_lock (id, pid, host, started_at, command) VALUES (1, ?, ?, '2025-01-01T00:00:00.000Z', 'mediabatch run jobs.yaml')",
  ).run(pid, host);
  db.close();
}

function lockError(fn: () => void): ConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected the lock to be refused');
}

describe('run lock', () => {
  const t = useTempLedgers();
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill();
        await once(child, 'exit');
      }
    }
  });

  it('refuses while the holder on this host is alive', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    children.push(child);
    await once(child, 'spawn');
    const ledger = t.open();
    writeLock(ledger.path, child.pid!, HOST);

    const error = lockError(() => ledger.acquireRunLock({ pid: process.pid, host: HOST, command: 'mediabatch run' }));
    expect(error.code).toBe('E_LOCKED');
    expect(error.message).toBe(
      `ledger ${ledger.path} is in use by mediabatch pid ${child.pid} on ${HOST} since 2025-01-01T00:00:00.000Z (mediabatch run jobs.yaml): wait for it to finish or stop it; if it is not running, delete the lock with: sqlite3 "${ledger.path}" "DELETE FROM run_lock"`,
    );

    // Once the holder is gone the same call succeeds and says whose lock it took over.
    child.kill();
    await once(child, 'exit');
    ledger.acquireRunLock({ pid: process.pid, host: HOST, command: 'mediabatch run' });
  });

  it('takes over the lock of a holder that died, and records it', async () => {
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await once(child, 'exit');
    const ledger = t.open();
    writeLock(ledger.path, child.pid!, HOST);

    ledger.acquireRunLock({ pid: process.pid, host: HOST, command: 'mediabatch run jobs.yaml' });

    const raw = new Database(ledger.path, { readonly: true });
    const events = raw.prepare('SELECT kind, detail_json FROM events WHERE job_id IS NULL ORDER BY id').all() as {
      kind: string;
      detail_json: string;
    }[];
    const lock = raw.prepare('SELECT pid FROM run_lock').get();
    raw.close();
    expect(lock).toEqual({ pid: process.pid });
    expect(events.map((e) => e.kind)).toEqual(['lock_taken_over', 'lock_acquired']);
    expect(JSON.parse(events[0]!.detail_json)).toMatchObject({ deadPid: child.pid, host: HOST });
  });

  it('treats a holder on another host as alive', () => {
    const ledger = t.open();
    writeLock(ledger.path, 1, 'build-server-7');
    expect(lockError(() => ledger.acquireRunLock({ pid: process.pid, host: HOST, command: 'x' })).code).toBe('E_LOCKED');
  });

  it('a second connection is refused until the first releases or closes', () => {
    const first = t.open();
    const second = t.open();
    first.acquireRunLock({ pid: process.pid, host: HOST, command: 'mediabatch run a.yaml' });
    expect(lockError(() => second.acquireRunLock({ pid: process.pid, host: HOST, command: 'b' })).code).toBe('E_LOCKED');
    first.releaseRunLock();
    second.acquireRunLock({ pid: process.pid, host: HOST, command: 'b' });
    second.close();
    first.acquireRunLock({ pid: process.pid, host: HOST, command: 'a' });
  });
});
