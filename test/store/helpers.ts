import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { Ledger, SqliteLedgerOptions } from '../../src/store/index.js';
import { openSqliteLedger } from '../../src/store/index.js';

/** A fresh temp folder per test, removed afterwards with every ledger opened in it closed. */
export function useTempLedgers(): {
  dir: () => string;
  open: (name?: string, options?: Partial<SqliteLedgerOptions>) => Promise<Ledger>;
} {
  const dirs: string[] = [];
  const ledgers: Ledger[] = [];
  afterEach(async () => {
    for (const ledger of ledgers.splice(0)) await ledger.close().catch(() => undefined);
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const dir = (): string => {
    if (dirs.length === 0) dirs.push(mkdtempSync(join(tmpdir(), 'mediabatch-store-')));
    return dirs[0]!;
  };
  return {
    dir,
    open: async (name = 'jobs.mediabatch.db', options = {}) => {
      const ledger = await openSqliteLedger(join(dir(), name), { mode: 'read-write', ...options });
      ledgers.push(ledger);
      return ledger;
    },
  };
}

export { seed, spec, sync } from './contract/fixtures.js';
