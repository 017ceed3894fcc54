import { openSqliteLedger, type Ledger, type SqliteLedgerOptions } from '../../src/store/index.js';
import { ROOT } from './cli.js';

/** The writer thread runs plain JavaScript, so tests start it from the build (as the e2e tests run the built CLI). */
export const BUILT_WRITER_THREAD = new URL(`file://${ROOT}/dist/src/store/sqlite/writer-thread.js`);

/** The SQLite ledger as the CLI opens it; in 'run' mode its writer thread comes from the build. */
export function openTestLedger(path: string, options: SqliteLedgerOptions): Promise<Ledger> {
  return openSqliteLedger(path, { writerThreadUrl: BUILT_WRITER_THREAD, ...options });
}
