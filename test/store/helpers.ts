import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { openLedger, type JobSpec, type Ledger, type OpenLedgerOptions } from '../../src/store/index.js';

/** A fresh temp folder per test, removed afterwards with every ledger opened in it closed. */
export function useTempLedgers(): {
  dir: () => string;
  open: (name?: string, options?: OpenLedgerOptions) => Ledger;
} {
  const dirs: string[] = [];
  const ledgers: Ledger[] = [];
  afterEach(() => {
    for (const ledger of ledgers.splice(0)) ledger.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const dir = (): string => {
    if (dirs.length === 0) dirs.push(mkdtempSync(join(tmpdir(), 'mediabatch-store-')));
    return dirs[0]!;
  };
  return {
    dir,
    open: (name = 'jobs.mediabatch.db', options = {}) => {
      const ledger = openLedger(join(dir(), name), options);
      ledgers.push(ledger);
      return ledger;
    },
  };
}

export function spec(id: string, index: number, contentHash = `hash-${id}`): JobSpec {
  return { id, index, contentHash, type: 'txt2audio', paramsJson: JSON.stringify({ text: id }), textChars: id.length };
}

/** Syncs the jobs and gives each the price listed. */
export function seed(ledger: Ledger, prices: Record<string, number>): void {
  const ids = Object.keys(prices);
  ledger.syncJobs(ids.map((id, index) => spec(id, index)));
  ledger.setPrices(ids.map((id) => ({ id, priceUsd: prices[id]!, source: 'quoted', priceKey: `k-${id}` })));
}
