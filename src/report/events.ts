import { stringify } from 'csv-stringify/sync';
import { terminalSafeJson } from '../control-chars.js';
import type { JobState } from '../jobs/states.js';
import { microToUsd } from '../money.js';
import { csvCell } from './csv.js';

/** One event of the ledger's log, as the ledger reads it (store's EventRow, restated: report knows no store). */
export interface LedgerEvent {
  id: number;
  at: string;
  jobId: string | null;
  kind: string;
  fromState: JobState | null;
  toState: JobState | null;
  detail: unknown;
}

const EVENT_CSV_COLUMNS = ['id', 'at', 'job_id', 'event', 'from_state', 'to_state', 'detail'] as const;

/** What `mediabatch log` prints for one event: stable snake_case keys, money in decimal dollars. */
function eventRecord(event: LedgerEvent): Record<(typeof EVENT_CSV_COLUMNS)[number], unknown> {
  return {
    id: event.id,
    at: event.at,
    job_id: event.jobId,
    event: event.kind,
    from_state: event.fromState,
    to_state: event.toState,
    detail: snakeCaseKeys(event.detail),
  };
}

/**
 * A detail as the ledger stored it (`{ requestId, spentMicro }`) with the keys every other
 * document uses (`{ request_id, spent_usd }`): a `…Micro` amount becomes `…_usd` in exact dollars.
 */
export function snakeCaseKeys(detail: unknown): unknown {
  if (Array.isArray(detail)) return detail.map(snakeCaseKeys);
  if (detail === null || typeof detail !== 'object') return detail;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(detail)) {
    const micro = /^(.+)Micro$/.exec(key);
    if (micro !== null && (typeof value === 'number' || value === null)) {
      out[`${snakeCase(micro[1] ?? key)}_usd`] = value === null ? null : microToUsd(value);
    } else {
      out[snakeCase(key)] = snakeCaseKeys(value);
    }
  }
  return out;
}

function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (upper) => `_${upper.toLowerCase()}`);
}

/** One JSON document a line; the service's text in reasons is escaped so the output is safe to print. */
export function eventsJsonl(events: readonly LedgerEvent[]): string {
  return events.map((event) => `${terminalSafeJson(eventRecord(event))}\n`).join('');
}

/**
 * RFC 4180 CSV rows (the header only when asked: the first window of a log printed in windows).
 * The detail is its JSON text, escaped like the JSON Lines; every text cell has the formula guard.
 */
export function eventsCsv(events: readonly LedgerEvent[], options: { header: boolean }): string {
  const rows = events.map((event) => {
    const record = eventRecord(event);
    return { ...record, detail: record.detail === null ? '' : terminalSafeJson(record.detail) };
  });
  return stringify(rows, { header: options.header, columns: [...EVENT_CSV_COLUMNS], cast: { string: csvCell } });
}
