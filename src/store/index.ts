/** The SQLite ledger: the only folder that knows about better-sqlite3. */
export { openLedger, type Ledger, type OpenLedgerOptions } from './ledger.js';
export { JOB_STATES, isJobState, canTransition, type JobState, type State } from '../jobs/states.js';
export type { JobRow, EventRow } from './rows.js';
export type { JobSpec, JobPrice, JobView, JobOutcome, ChangedJob, SyncResult } from './jobs.js';
export type { ReserveResult, ReservableState, RemoteFailure, StoredResult, SubmittedResult } from './transitions.js';
export type { CachedPrice, PriceEntry } from './caches.js';
export type { CollectIssue } from './collect-notes.js';
export type { LockHolder } from './run-lock.js';
export { SCHEMA_VERSION } from './schema.js';
export { inlineWriter, type LedgerWriter, type WriteMethod } from './writer.js';
export { threadWriter } from './thread-writer.js';
