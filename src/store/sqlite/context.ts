import type Database from 'better-sqlite3';
import type { JobState } from '../../jobs/states.js';
import type { JobType } from '../../jobs/types.js';
import type { MicroUsd } from '../../money.js';
import type { CollectIssue, JobRow } from '../ledger.js';

/**
 * A part of the Ledger as the SQLite core runs it: synchronously, on one connection, each call
 * its own transaction (or a savepoint of a group commit's), its answer already applied.
 * sqlite-ledger.ts turns it back into the async interface.
 */
export type Sync<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : never;
};

/** The columns of `jobs` exactly as SQLite returns them (money in whole micro-dollars). */
export interface RawJob {
  id: string;
  manifest_index: number;
  content_hash: string;
  type: JobType;
  params_json: string;
  text_chars: number | null;
  price_micro: number | null;
  price_source: string | null;
  price_key: string | null;
  state: JobState;
  request_id: string | null;
  attempts: number;
  spent_micro: number;
  carried_micro: number;
  last_error: string | null;
  result_path: string | null;
  result_bytes: number | null;
  result_sha256: string | null;
  created_at: string;
  updated_at: string;
  submitted_at: string | null;
  finished_at: string | null;
  unit: string | null;
  seen: number;
  in_manifest: number;
  origin: string | null;
  text: string | null;
  files_json: string | null;
  tags_json: string | null;
  group_key: string | null;
  parent_id: string | null;
  follow_seq: number | null;
  retryable: number | null;
  refunded: number | null;
}

const flag = (value: number | null): boolean | null => (value === null ? null : value === 1);

/**
 * The columns a JobRow is made of, in the order a listing selects them, then the collect issue
 * and, when asked, the send flag. Listings read rows as arrays (better-sqlite3's `.raw()`): an
 * object a row, keyed by column name, costs twice as much to build (npm run bench).
 */
const JOB_COLUMNS = [
  'id', 'manifest_index', 'content_hash', 'type', 'params_json', 'text_chars', 'text', 'files_json', 'tags_json',
  'origin', 'in_manifest', 'parent_id', 'group_key', 'price_micro', 'price_source', 'price_key', 'state',
  'request_id', 'attempts', 'spent_micro', 'last_error', 'retryable', 'refunded', 'result_path', 'result_bytes',
  'result_sha256', 'created_at', 'updated_at', 'submitted_at', 'finished_at',
] as const satisfies readonly (keyof RawJob)[];

export const JOB_COLUMNS_SQL = JOB_COLUMNS.join(', ');
const JOB_ISSUE = JOB_COLUMNS.length;
const JOB_TO_SEND = JOB_COLUMNS.length + 1;

type Column = (typeof JOB_COLUMNS)[number];
const at = Object.fromEntries(JOB_COLUMNS.map((name, index) => [name, index])) as Record<Column, number>;

/** A row read with `.raw()` from `SELECT ${JOB_COLUMNS_SQL}[, issue[, to_send]]`. */
export function toJobRow(values: readonly unknown[]): JobRow {
  const v = <K extends Column>(name: K): RawJob[K] => values[at[name]] as RawJob[K];
  const tagsJson = v('tags_json');
  // One literal, the optional flag added after: a literal that starts with a spread is built
  // property by property in V8's slow dictionary mode.
  const row: JobRow = {
    id: v('id'),
    manifestIndex: v('manifest_index'),
    contentHash: v('content_hash'),
    type: v('type'),
    paramsJson: v('params_json'),
    textChars: v('text_chars'),
    text: v('text'),
    filesJson: v('files_json'),
    tags: tagsJson === null ? [] : (JSON.parse(tagsJson) as string[]),
    origin: v('origin'),
    inManifest: v('in_manifest') === 1,
    parentId: v('parent_id'),
    groupKey: v('group_key'),
    priceMicro: v('price_micro'),
    priceSource: v('price_source'),
    priceKey: v('price_key'),
    state: v('state'),
    requestId: v('request_id'),
    attempts: v('attempts'),
    spentMicro: v('spent_micro'),
    lastError: v('last_error'),
    retryable: flag(v('retryable')),
    refunded: flag(v('refunded')),
    issue: (values[JOB_ISSUE] ?? null) as CollectIssue | null,
    resultPath: v('result_path'),
    resultBytes: v('result_bytes'),
    resultSha256: v('result_sha256'),
    createdAt: v('created_at'),
    updatedAt: v('updated_at'),
    submittedAt: v('submitted_at'),
    finishedAt: v('finished_at'),
  };
  if (values.length > JOB_TO_SEND) row.toSend = values[JOB_TO_SEND] === 1;
  return row;
}

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
