import type Database from 'better-sqlite3';
import type { RawJob } from './rows.js';
import type { JobState } from '../../jobs/states.js';
import type { MicroUsd } from '../../money.js';

/** The columns a state change may write; everything else about a job is written by the ingest (ingest.ts). */
export interface JobProgress {
  state: JobState;
  requestId: string | null;
  attempts: number;
  spentMicro: MicroUsd;
  /** Spend of earlier attempts (an in-doubt job sent again) kept under this attempt's. */
  carriedMicro: MicroUsd;
  lastError: string | null;
  retryable: boolean | null;
  refunded: boolean | null;
  /** The order in which jobs became submitted, for following them in windows. */
  followSeq: number | null;
  resultPath: string | null;
  resultBytes: number | null;
  resultSha256: string | null;
  submittedAt: string | null;
  finishedAt: string | null;
}

/** What every part of the ledger shares: the connection, the clock and the core statements. */
export interface StoreContext {
  db: Database.Database;
  path: string;
  nowIso(): string;
  nowMs(): number;
  getRawJob(id: string): RawJob | undefined;
  /** `at` defaults to now; a state change passes the time it stamped on the row. */
  insertEvent(jobId: string | null, kind: string, from: JobState | null, to: JobState | null, detail: unknown, at?: string): void;
  /** Writes `next` over the row only if it is still in `from`; returns whether it was. */
  writeProgress(id: string, from: JobState, next: JobProgress, now: string): boolean;
  spentTotalMicro(): MicroUsd;
}

export function createContext(db: Database.Database, path: string, nowMs: () => number): StoreContext {
  const selectJob = db.prepare<[string], RawJob>('SELECT * FROM jobs WHERE id = ?');
  const insertEvent = db.prepare(
    `INSERT INTO events (at, job_id, kind, from_state, to_state, detail_json)
     VALUES (@at, @jobId, @kind, @from, @to, @detail)`,
  );
  const updateProgress = db.prepare(
    `UPDATE jobs SET state = @state, request_id = @requestId, attempts = @attempts, spent_micro = @spentMicro, carried_micro = @carriedMicro,
       last_error = @lastError, retryable = @retryable, refunded = @refunded, follow_seq = @followSeq, result_path = @resultPath, result_bytes = @resultBytes,
       result_sha256 = @resultSha256, submitted_at = @submittedAt, finished_at = @finishedAt,
       updated_at = @updatedAt
     WHERE id = @id AND state = @from`,
  );
  // Kept by triggers (migrations 2 and 5); reading it is O(1), which the per-submit budget check needs.
  const spentTotal = db.prepare<[], { total: number }>('SELECT spent_micro AS total FROM spend_total WHERE id = 1');
  const nowIso = (): string => new Date(nowMs()).toISOString();
  return {
    db,
    path,
    nowMs,
    nowIso,
    getRawJob: (id) => selectJob.get(id),
    insertEvent: (jobId, kind, from, to, detail, at = nowIso()) => {
      insertEvent.run({
        at,
        jobId,
        kind,
        from,
        to,
        detail: detail === undefined ? null : JSON.stringify(detail),
      });
    },
    writeProgress: (id, from, next, now) =>
      updateProgress.run({ ...next, retryable: flagOf(next.retryable), refunded: flagOf(next.refunded), id, from, updatedAt: now }).changes === 1,
    spentTotalMicro: () => spentTotal.get()?.total ?? 0,
  };
}

export function progressOf(raw: RawJob): JobProgress {
  return {
    state: raw.state,
    requestId: raw.request_id,
    attempts: raw.attempts,
    spentMicro: raw.spent_micro,
    carriedMicro: raw.carried_micro,
    lastError: raw.last_error,
    retryable: raw.retryable === null ? null : raw.retryable === 1,
    refunded: raw.refunded === null ? null : raw.refunded === 1,
    followSeq: raw.follow_seq,
    resultPath: raw.result_path,
    resultBytes: raw.result_bytes,
    resultSha256: raw.result_sha256,
    submittedAt: raw.submitted_at,
    finishedAt: raw.finished_at,
  };
}

function flagOf(value: boolean | null): number | null {
  return value === null ? null : value ? 1 : 0;
}
