/** The ledger: one async interface in roles (ledger.ts), and the SQLite ledger (the only code that knows SQLite). */
export type * from './ledger.js';
export { LedgerLockedError } from './ledger.js';
export { openSqliteLedger, type SqliteLedgerMode, type SqliteLedgerOptions } from './sqlite/sqlite-ledger.js';
export { SCHEMA_VERSION } from './sqlite/schema.js';
export { JOB_STATES, isJobState, canTransition, type JobState, type State } from '../jobs/states.js';
