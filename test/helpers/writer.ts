import { threadWriter, type LedgerWriter } from '../../src/store/index.js';
import { ROOT } from './cli.js';

/**
 * The writer the CLI uses, for tests that drive the runner in-process. Its thread runs plain
 * JavaScript, so it is started from the build (as the e2e tests run the built CLI).
 */
export function builtThreadWriter(ledgerPath: string): LedgerWriter {
  return threadWriter(ledgerPath, new URL(`file://${ROOT}/dist/src/store/sqlite/writer-thread.js`));
}
