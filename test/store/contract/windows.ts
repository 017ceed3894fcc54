import { describe, expect, it } from 'vitest';
import type { JobRow } from '../../../src/store/index.js';
import { eachJob } from '../../../src/store/index.js';
import type { Ledgers } from '../ledger-contract.js';
import { done, ids, seed, spec } from './fixtures.js';

/** `readJobs`: whole rows, a window at a time, in manifest order (what the review page streams). */
export function windowsContract(ledgers: Ledgers): void {
  describe('readJobs', () => {
    it('reads every row once, in manifest order, one window at a time', async () => {
      const ledger = await ledgers.create();
      const names = ids(7);
      await seed(ledger, Object.fromEntries(names.map((id, i) => [id, (i + 1) * 1000])));
      // Reversed: the order is the manifest's, not the ids'.
      await ledger.syncJobs([...names].reverse().map((id, index) => spec(id, index)));

      const first = await ledger.readJobs({ limit: 3 });
      expect(first.map((row) => row.id)).toEqual(['j006', 'j005', 'j004']);
      const last = first.at(-1)!;
      const second = await ledger.readJobs({ after: last, limit: 3 });
      expect(second.map((row) => row.id)).toEqual(['j003', 'j002', 'j001']);
      expect((await ledger.readJobs({ after: second.at(-1)!, limit: 3 })).map((row) => row.id)).toEqual(['j000']);
      expect(await ledger.readJobs({ after: { manifestIndex: 6, id: 'j000' }, limit: 3 })).toEqual([]);
      for (const row of [...first, ...second]) expect(row).toEqual(await ledger.getJob(row.id));
    });

    it('keeps apart jobs that share a manifest index (one the manifest dropped), by id', async () => {
      const ledger = await ledgers.create();
      await ledger.syncJobs([spec('b', 0), spec('z', 1)]);
      // "b" is dropped: it keeps index 0, which "a" and "c" now share with it.
      await ledger.syncJobs([spec('c', 0), spec('z', 1), spec('a', 0)]);
      const seen: string[] = [];
      let after: JobRow | undefined;
      for (;;) {
        const rows = await ledger.readJobs({ after, limit: 1 });
        if (rows.length === 0) break;
        seen.push(...rows.map((row) => `${row.manifestIndex}:${row.id}`));
        after = rows.at(-1);
      }
      expect(seen).toEqual(['0:a', '0:b', '0:c', '1:z']);
    });

    it('reads whole rows: state, price, spend, request id, error and result', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 1_000_000, b: 250_000, c: 500_000 });
      await ledger.reserveForSubmit('a', null, ['pending']);
      await ledger.markSubmitted('a', 'req-a');
      await ledger.markDone('a', done);
      await ledger.reserveForSubmit('b', null, ['pending']);
      await ledger.markRefused('b', 'no such voice');
      const [a, b, c] = await ledger.readJobs({ limit: 10 });
      expect(a).toMatchObject({ id: 'a', state: 'done', requestId: 'req-a', priceMicro: 1_000_000, spentMicro: 1_000_000, resultPath: done.path });
      expect(b).toMatchObject({ id: 'b', state: 'failed', priceSource: 'quoted', spentMicro: 0, lastError: 'no such voice' });
      expect(c).toMatchObject({ id: 'c', state: 'pending', paramsJson: JSON.stringify({ text: 'c' }), resultPath: null });
    });

    it('reads the same from a read-only handle, and eachJob walks all windows', async () => {
      const ledger = await ledgers.create();
      const names = ids(25);
      await ledger.syncJobs(names.map((id, index) => spec(id, index)));
      const reader = await ledgers.reopen(ledger, { readonly: true });
      const walked: string[] = [];
      for await (const row of eachJob(reader, 4)) walked.push(row.id);
      expect(walked).toEqual(names);
      const exact: string[] = [];
      for await (const row of eachJob(reader, 5)) exact.push(row.id);
      expect(exact).toEqual(names);
    });

    it('refuses a window of no rows as a bug', async () => {
      const ledger = await ledgers.create();
      await expect(ledger.readJobs({ limit: 0 })).rejects.toThrow(/^bug in mediabatch: a window of 0 jobs/);
      await expect(ledger.readJobs({ limit: 1.5 })).rejects.toThrow(/^bug in mediabatch/);
    });
  });
}
