/** The ledger: one async interface (ledger.ts) and the SQLite implementation, the only code that knows better-sqlite3. */
export type {
  Ledger,
  JobSpec,
  JobPrice,
  JobRow,
  JobView,
  JobOutcome,
  EventRow,
  ChangedJob,
  SyncResult,
  ReserveResult,
  ReservableState,
  RemoteFailure,
  StoredResult,
  SubmittedResult,
  CollectIssue,
  CachedPrice,
  PriceEntry,
  LockHolder,
  WebhookRun,
  DeliveryJob,
  DeliveryRecord,
} from './ledger.js';
export { openSqliteLedger, type SqliteLedgerMode, type SqliteLedgerOptions } from './sqlite/sqlite-ledger.js';
export { SCHEMA_VERSION } from './sqlite/schema.js';
export { JOB_STATES, isJobState, canTransition, type JobState, type State } from '../jobs/states.js';
