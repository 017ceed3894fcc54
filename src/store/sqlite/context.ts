import type Database from 'better-sqlite3';
import type { RawJob } from './rows.js';
import type { JobState } from '../../jobs/states.js';
import type { MicroUsd } from '../../money.js';

/**
 * A part of the Ledger as the SQLite core runs it: synchronously, on one connection, each call
 * its own transaction (or a savepoint of a group commit's), its answer already applied.
 * sqlite-ledger.ts turns it back into the async interface.
 */
export type Sync<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : never;
};

/** The columns a state change may write; everything else about a job is written by the ingest (ingest.ts). */
const PROGRESS = [
  'state', 'request_id', 'attempts', 'spent_micro', 'carried_micro', 'last_error', 'retryable', 'refunded',
  'follow_seq', 'result_path', 'result_bytes', 'result_sha256', 'submitted_at', 'finished_at',
] as const satisfies readonly (keyof RawJob)[];
export type JobProgress = Pick<RawJob, (typeof PROGRESS)[number]>;

type State = JobState | null;

/** What every part of the ledger shares: the connection, the clock and the core statements. */
export type StoreContext = ReturnType<typeof createContext>;

export function createContext(db: Database.Database, path: string, nowMs: () => number) {
  const selectJob = db.prepare<[string], RawJob>('SELECT * FROM jobs WHERE id = ?');
  const insertEvent = db.prepare(
    `INSERT INTO events (at, job_id, kind, from_state, to_state, detail_json)
     VALUES (@at, @jobId, @kind, @from, @to, @detail)`,
  );
  const progressSql = PROGRESS.map((column) => `${column} = @${column}`).join(', ');
  const updateProgress = db.prepare(`UPDATE jobs SET ${progressSql}, updated_at = @now WHERE id = @id AND state = @from`);
  // Kept by triggers (migrations 2 and 5); reading it is O(1), which the per-submit budget check needs.
  const spentTotal = db.prepare<[], { total: number }>('SELECT spent_micro AS total FROM spend_total WHERE id = 1');
  const nowIso = (): string => new Date(nowMs()).toISOString();
  return {
    db,
    path,
    nowMs,
    nowIso,
    getRawJob: (id: string) => selectJob.get(id),
    /** `at` defaults to now; a state change passes the time it stamped on the row. */
    insertEvent: (jobId: string | null, kind: string, from: State, to: State, detail: unknown, at = nowIso()): void => {
      insertEvent.run({ at, jobId, kind, from, to, detail: detail === undefined ? null : JSON.stringify(detail) });
    },
    /**
     * Writes `next` over the row only if it is still in `from`; returns whether it was. `next`
     * may be a whole row with changes: the statement binds the columns it names.
     */
    writeProgress: (id: string, from: JobState, next: JobProgress, now: string) =>
      updateProgress.run({ ...next, id, from, now }).changes === 1,
    spentTotalMicro: (): MicroUsd => spentTotal.get()?.total ?? 0,
  };
}
