/** The SQLite ledger: the only folder that knows about better-sqlite3. */
export { openLedger, type Ledger, type OpenLedgerOptions } from './sqlite/ledger.js';
export { JOB_STATES, isJobState, canTransition, type JobState, type State } from '../jobs/states.js';
export type { JobRow, EventRow } from './sqlite/rows.js';
export type { JobSpec, JobPrice, JobView, JobOutcome, ChangedJob, SyncResult } from './sqlite/jobs.js';
export type { ReserveResult, ReservableState, RemoteFailure, StoredResult, SubmittedResult } from './sqlite/transitions.js';
export type { CachedPrice, PriceEntry } from './sqlite/caches.js';
export type { CollectIssue } from './sqlite/collect-notes.js';
export type { LockHolder } from './sqlite/run-lock.js';
export { SCHEMA_VERSION } from './sqlite/schema.js';
export { inlineWriter, type LedgerWriter, type WriteMethod } from './sqlite/writer.js';
export { threadWriter } from './sqlite/thread-writer.js';
