import type { JobType } from '../../jobs/types.js';
import type { JobState } from '../../jobs/states.js';

/** One job as the ledger holds it. Money in USD; timestamps are ISO 8601 strings. */
export interface JobRow {
  id: string;
  manifestIndex: number;
  contentHash: string;
  type: JobType;
  paramsJson: string;
  textChars: number | null;
  priceUsd: number | null;
  priceSource: string | null;
  priceKey: string | null;
  state: JobState;
  requestId: string | null;
  attempts: number;
  /** What the ledger believes is committed for this job (see the spend rule in ledger.ts). */
  spentUsd: number;
  lastError: string | null;
  resultPath: string | null;
  resultBytes: number | null;
  resultSha256: string | null;
  createdAt: string;
  updatedAt: string;
  submittedAt: string | null;
  finishedAt: string | null;
}

export interface EventRow {
  id: number;
  at: string;
  /** null for run-level events (lock taken over, sync summary …). */
  jobId: string | null;
  kind: string;
  fromState: JobState | null;
  toState: JobState | null;
  detail: unknown;
}

/** The columns exactly as SQLite returns them. */
export interface RawJob {
  id: string;
  manifest_index: number;
  content_hash: string;
  type: JobType;
  params_json: string;
  text_chars: number | null;
  price_usd: number | null;
  price_source: string | null;
  price_key: string | null;
  state: JobState;
  request_id: string | null;
  attempts: number;
  spent_usd: number;
  carried_usd: number;
  last_error: string | null;
  result_path: string | null;
  result_bytes: number | null;
  result_sha256: string | null;
  created_at: string;
  updated_at: string;
  submitted_at: string | null;
  finished_at: string | null;
}

export interface RawEvent {
  id: number;
  at: string;
  job_id: string | null;
  kind: string;
  from_state: JobState | null;
  to_state: JobState | null;
  detail_json: string | null;
}

export function toJobRow(raw: RawJob): JobRow {
  return {
    id: raw.id,
    manifestIndex: raw.manifest_index,
    contentHash: raw.content_hash,
    type: raw.type,
    paramsJson: raw.params_json,
    textChars: raw.text_chars,
    priceUsd: raw.price_usd,
    priceSource: raw.price_source,
    priceKey: raw.price_key,
    state: raw.state,
    requestId: raw.request_id,
    attempts: raw.attempts,
    spentUsd: raw.spent_usd,
    lastError: raw.last_error,
    resultPath: raw.result_path,
    resultBytes: raw.result_bytes,
    resultSha256: raw.result_sha256,
    createdAt: raw.created_at,
    updatedAt: raw.updated_at,
    submittedAt: raw.submitted_at,
    finishedAt: raw.finished_at,
  };
}

export function toEventRow(raw: RawEvent): EventRow {
  return {
    id: raw.id,
    at: raw.at,
    jobId: raw.job_id,
    kind: raw.kind,
    fromState: raw.from_state,
    toState: raw.to_state,
    detail: raw.detail_json === null ? null : JSON.parse(raw.detail_json),
  };
}
