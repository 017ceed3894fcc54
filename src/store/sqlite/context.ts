import type Database from 'better-sqlite3';
import type { JobState } from '../../jobs/states.js';
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

/**
 * The columns a JobRow is made of, each with the field it becomes, in the order a listing
 * selects them, then the collect issue and, when asked, the send flag. Listings read rows as
 * arrays (better-sqlite3's `.raw()`): an object a row, keyed by column name, costs twice as
 * much to build (npm run bench).
 */
const JOB_FIELDS = {
  id: 'id', manifest_index: 'manifestIndex', content_hash: 'contentHash', type: 'type', params_json: 'paramsJson',
  text_chars: 'textChars', text: 'text', files_json: 'filesJson', tags_json: 'tags', origin: 'origin',
  in_manifest: 'inManifest', parent_id: 'parentId', group_key: 'groupKey', price_micro: 'priceMicro',
  price_source: 'priceSource', price_key: 'priceKey', state: 'state', request_id: 'requestId', attempts: 'attempts',
  spent_micro: 'spentMicro', last_error: 'lastError', retryable: 'retryable', refunded: 'refunded',
  result_path: 'resultPath', result_bytes: 'resultBytes', result_sha256: 'resultSha256', created_at: 'createdAt',
  updated_at: 'updatedAt', submitted_at: 'submittedAt', finished_at: 'finishedAt', price_bound: 'priceBound',
  step: 'step',
} as const satisfies Record<string, keyof JobRow>;
type Column = keyof typeof JOB_FIELDS;
const JOB_COLUMNS = Object.keys(JOB_FIELDS) as Column[];

type Flags = 'tags_json' | 'in_manifest' | 'retryable' | 'refunded' | 'price_bound';
/** The columns of `jobs` as SQLite returns them: a JobRow's values, its flags as 0 or 1 and its tags as JSON. */
export type RawJob = { [C in Exclude<Column, Flags>]: JobRow[(typeof JOB_FIELDS)[C]] } & {
  tags_json: string | null;
  in_manifest: number;
  retryable: number | null;
  refunded: number | null;
  price_bound: number;
  /** What earlier attempts may have cost (spent_micro counts them with this one's price). */
  carried_micro: number;
  follow_seq: number | null;
  unit: string | null;
  seen: number;
};

const flag = (value: number | null): boolean | null => (value === null ? null : value === 1);

/** Then the inputs, field → id, as a JSON object ('{}' without any), through job_inputs' primary key. */
export const JOB_COLUMNS_SQL = `${JOB_COLUMNS.join(', ')},
  (SELECT json_group_object(field, from_id) FROM job_inputs WHERE job_inputs.job_id = jobs.id)`;
const JOB_INPUTS = JOB_COLUMNS.length;
const JOB_ISSUE = JOB_COLUMNS.length + 1;
const JOB_TO_SEND = JOB_COLUMNS.length + 2;

const at = Object.fromEntries(JOB_COLUMNS.map((name, index) => [name, index])) as Record<Column, number>;

/** A row read with `.raw()` from `SELECT ${JOB_COLUMNS_SQL}[, issue[, to_send]]`. */
export function toJobRow(values: readonly unknown[]): JobRow {
  const v = <K extends Column>(name: K): RawJob[K] => values[at[name]] as RawJob[K];
  const tagsJson = v('tags_json');
  const inputsJson = values[JOB_INPUTS] as string;
  const inputs = inputsJson === '{}' ? null : (JSON.parse(inputsJson) as Record<string, string>);
  const inManifest = v('in_manifest') === 1;
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
    inManifest,
    parentId: v('parent_id'),
    inputs,
    priceBound: v('price_bound') === 1,
    step: inManifest ? (v('step') ?? (inputs === null ? 1 : null)) : null,
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

type State = JobState | null;

/** What every part of the ledger shares: the connection, the clock and the core statements. */
export type StoreContext = ReturnType<typeof createContext>;

export function createContext(db: Database.Database, path: string, nowMs: () => number) {
  const insertEvent = db.prepare(
    `INSERT INTO events (at, job_id, kind, from_state, to_state, detail_json)
     VALUES (@at, @jobId, @kind, @from, @to, @detail)`,
  );
  // Kept by triggers (migrations 2 and 5); reading it is O(1), which the per-submit budget check needs.
  const spentTotal = db.prepare<[], { total: number }>('SELECT spent_micro AS total FROM spend_total WHERE id = 1');
  const nowIso = (): string => new Date(nowMs()).toISOString();
  return {
    db,
    path,
    nowMs,
    nowIso,
    /** `at` defaults to now; a state change passes the time it stamped on the row. */
    insertEvent: (jobId: string | null, kind: string, from: State, to: State, detail: unknown, at = nowIso()): void => {
      insertEvent.run({ at, jobId, kind, from, to, detail: detail === undefined ? null : JSON.stringify(detail) });
    },
    spentTotalMicro: (): MicroUsd => spentTotal.get()?.total ?? 0,
  };
}
