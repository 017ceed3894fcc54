import type { JobState } from '../../../src/jobs/states.js';
import type { MicroUsd } from '../../../src/money.js';
import type { EventRow, JobCursor, JobPick, JobRow, JobScope, LockHolder, SendSelection, UnitRecord, WebhookRun } from '../../../src/store/ledger.js';

/** A role's methods as the memory ledger runs them: synchronous, each whole or not at all. */
export type Sync<T> = { [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : T[K] };

/** A job as the memory ledger keeps it: the row a reader gets, and what only the ledger needs. */
export interface MemoryJob extends Omit<JobRow, 'toSend' | 'inputs'> {
  /** Its inputs (JobSpec.inputs), each with the sha256 of the result it was last sent with. */
  inputRefs: { field: string; from: string; origin: string; sentSha256: string | null }[];
  /** Spend of earlier attempts (an in-doubt job sent again) kept under this attempt's. */
  carriedMicro: MicroUsd;
  followSeq: number | null;
  unit: string | null;
  /** The ingest that last saw it in the manifest. */
  seen: number;
}

/** An event as stored: its detail as JSON, so what was written can never change under a reader. */
type StoredEvent = Omit<EventRow, 'detail'> & { detailJson: string | null };

/** Everything one memory ledger holds; every handle on it shares one. */
export interface MemoryData {
  jobs: Map<string, MemoryJob>;
  events: StoredEvent[];
  units: Map<string, UnitRecord>;
  unitFiles: Map<string, Map<string, string>>;
  prices: Map<string, { priceUsd: number; source: string; atMs: number }>;
  catalogues: Map<string, { json: string; atMs: number }>;
  meta: Map<string, string>;
  webhookRuns: WebhookRun[];
  webhookJobs: Map<string, number>;
  deliveries: Set<string>;
  lock: (LockHolder & { startedAt: string }) | undefined;
  counters: { follow: number; ingest: number; jobsVersion: number };
  /** The jobs in manifest order, built when first read; only an ingest moves jobs, and it starts a new copy. */
  order?: MemoryJob[];
}

export function emptyData(): MemoryData {
  return {
    jobs: new Map(),
    events: [],
    units: new Map(),
    unitFiles: new Map(),
    prices: new Map(),
    catalogues: new Map(),
    meta: new Map(),
    webhookRuns: [],
    webhookJobs: new Map(),
    deliveries: new Set(),
    lock: undefined,
    counters: { follow: 0, ingest: 0, jobsVersion: 0 },
  };
}

export function appendEvent(data: MemoryData, at: string, jobId: string | null, kind: string, from: JobState | null, to: JobState | null, detail?: unknown): void {
  const detailJson = detail === undefined ? null : JSON.stringify(detail);
  data.events.push({ id: data.events.length + 1, at, jobId, kind, fromState: from, toState: to, detailJson });
}

export const toEvent = ({ detailJson, ...event }: StoredEvent): EventRow => ({ ...event, detail: detailJson === null ? null : JSON.parse(detailJson) });

export function toRow(job: MemoryJob, toSend?: boolean): JobRow {
  const { carriedMicro: _c, followSeq: _f, unit: _u, seen: _s, inputRefs, ...rest } = job;
  const inputs = inputRefs.length === 0 ? null : Object.fromEntries(inputRefs.map((input) => [input.field, input.from]));
  const row = { ...rest, tags: [...rest.tags], inputs, step: job.inManifest ? (job.step ?? (inputs === null ? 1 : null)) : null };
  return toSend === undefined ? row : { ...row, toSend };
}

/** Manifest order: by index, then id (dropped jobs may share an index with listed ones). */
export const byPlace = (a: JobCursor, b: JobCursor): number => a.index - b.index || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
export const placeOf = (job: MemoryJob): JobCursor => ({ index: job.manifestIndex, id: job.id });

export function manifestOrder(data: MemoryData): MemoryJob[] {
  data.order ??= [...data.jobs.values()].sort((a, b) => byPlace(placeOf(a), placeOf(b)));
  return data.order;
}

// What selection.ts says in SQL, said once more for plain objects: the meaning must not differ.
const PAID: readonly JobState[] = ['submitting', 'submitted', 'in_doubt', 'done'];

export function inScope(job: MemoryJob, scope: JobScope): boolean {
  switch (scope) {
    case 'manifest':
      return job.inManifest;
    case 'report':
      return job.inManifest || PAID.includes(job.state);
    case 'dropped':
      return !job.inManifest && PAID.includes(job.state);
    case 'all':
      return true;
  }
}

const GLOB_CHARS = /[*?[]/;

/** A shell glob over the whole id, case-sensitive, as SQLite's GLOB matches. */
export function globMatcher(pattern: string): (id: string) => boolean {
  if (!GLOB_CHARS.test(pattern)) return (id) => id === pattern;
  let source = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const char = pattern[i]!;
    const close = char === '[' ? pattern.indexOf(']', i + 2) : -1;
    if (char === '*') source += '[^]*';
    else if (char === '?') source += '[^]';
    else if (close > 0) {
      const set = pattern.slice(i + 1, close).replace(/\\/g, '\\\\');
      source += `[${set}]`;
      i = close;
    } else source += char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  const regexp = new RegExp(`^${source}$`, 'u');
  return (id) => regexp.test(id);
}

export type JobTest = (job: MemoryJob) => boolean;

/** JobPick as a test, its globs compiled once per query. */
export function picker(pick: JobPick): JobTest {
  const only = (pick.only ?? []).map(globMatcher);
  const tags = pick.tags ?? [];
  return (job) => (only.length === 0 || only.some((match) => match(job.id))) && (tags.length === 0 || job.tags.some((tag) => tags.includes(tag)));
}

/** SendSelection: listed, picked, and in a state a run sends from (ledger.ts says which). */
export function sender(send: SendSelection): JobTest {
  const isPicked = picker(send);
  const redo = new Set(send.redo ?? []);
  return (job) => {
    const { state } = job;
    const from =
      state === 'pending' ||
      state === 'skipped' ||
      (state === 'failed' && job.retryable === true && job.refunded === true) ||
      (state === 'in_doubt' && send.resubmitInDoubt) ||
      ((state === 'done' || state === 'failed') && redo.has(job.id));
    return job.inManifest && from && isPicked(job);
  };
}
