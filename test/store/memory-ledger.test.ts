import { describe, expect, it } from 'vitest';
import { openMemoryLedger, type MemoryLedger } from '../support/memory-ledger/memory-ledger.js';
import { ledgerContract } from './ledger-contract.js';
import { allJobs, seed, spec } from './contract/fixtures.js';

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

  it('a window read during its own ingest leaves no stale order behind for after the commit', async () => {
    const ledger = openMemoryLedger();
    const ingest = await ledger.beginIngest();
    await ingest.put('jobs', [spec('b', 1)]);
    expect((await allJobs(ledger)).map((j) => j.id)).toEqual(['b']);
    await ingest.put('jobs', [spec('a', 0), spec('c', 2)]);
    await ingest.commit([{ key: 'jobs', position: 0, fingerprint: 'f' }]);
    expect((await allJobs(ledger)).map((j) => j.id)).toEqual(['a', 'b', 'c']);
  });
});
