import { describe, expect, it } from 'vitest';
import { openMemoryLedger, type MemoryLedger } from '../../src/store/index.js';
import { ledgerContract } from './ledger-contract.js';
import { seed } from './contract/fixtures.js';

// The same contract as the SQLite ledger's: a second handle is a `reopen` on the same memory.
ledgerContract('memory', {
  create: async (options = {}) => openMemoryLedger(options),
  reopen: async (ledger, options = {}) => (ledger as MemoryLedger).reopen(options),
});

describe('memory ledger', () => {
  it('refuses copyTo, which only a file ledger can do, as a bug', async () => {
    const ledger = openMemoryLedger();
    await seed(ledger, { a: 1_000 });
    await expect(ledger.copyTo('/tmp/x.db')).rejects.toThrow(/^bug in mediabatch: an in-memory ledger cannot be copied/);
  });

  it('refuses a change through another handle while an ingest is open, and changes nothing', async () => {
    const ledger = openMemoryLedger();
    await seed(ledger, { a: 1_000 });
    const other = ledger.reopen();
    const ingest = await ledger.beginIngest();
    await expect(other.reserveForSubmit('a', null, ['pending'])).rejects.toThrow(/^bug in mediabatch: reserveForSubmit .* while an ingest is open/);
    await ingest.rollback();
    expect(await other.reserveForSubmit('a', null, ['pending'])).toBe('reserved');
  });
});
