import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalIoError } from '../../src/errors.js';
import { openSqliteLedger } from '../../src/store/index.js';
import { deleteLedgerFiles } from '../helpers/ledger-files.js';
import { ledgerContract, type LedgerFactory } from './ledger-contract.js';
import { seed, useTempLedgers } from './helpers.js';

/** The SQLite ledger as a run opens it, one temp folder per test. */
function sqliteFactory(): LedgerFactory {
  const dirs: string[] = [];
  return {
    create: (options = {}) => {
      const dir = mkdtempSync(join(tmpdir(), 'mediabatch-contract-'));
      dirs.push(dir);
      return openSqliteLedger(join(dir, 'jobs.mediabatch.db'), { mode: 'read-write', ...options });
    },
    reopen: (ledger, options = {}) =>
      openSqliteLedger(ledger.location, { mode: options.readonly === true ? 'read-only' : 'read-write', ...(options.nowMs ? { nowMs: options.nowMs } : {}) }),
    cleanup: () => {
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

ledgerContract('SQLite', sqliteFactory());

describe('SQLite ledger file', () => {
  const t = useTempLedgers();

  it('deleted under a run: nothing more is written, and the file comes back with every commit before', async () => {
    const ledger = await t.open();
    await seed(ledger, { a: 1_000_000, b: 1_000_000 });
    await ledger.reserveForSubmit('a', null, ['pending']);
    await ledger.markSubmitted('a', 'req-a');
    deleteLedgerFiles(ledger.location);

    const failure = await ledger.reserveForSubmit('b', null, ['pending']).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(LocalIoError);
    expect(failure).toMatchObject({ code: 'E_LEDGER_GONE', exitCode: 4 });
    expect((failure as Error).message).toMatch(
      /was deleted while this run was writing to it: nothing more is sent\. Everything it had recorded was written back to .*jobs\.mediabatch\.db; run the same command again to resume\.$/,
    );
    // Later changes are refused the same way; the file written back is left alone.
    await expect(ledger.recordEvent(null, 'note', {})).rejects.toMatchObject({ code: 'E_LEDGER_GONE' });
    expect(readdirSync(t.dir()).sort()).toEqual(['jobs.mediabatch.db']);
    await ledger.close().catch(() => undefined);

    const back = await t.open('jobs.mediabatch.db', { mode: 'read-only' });
    expect(await back.getJob('a')).toMatchObject({ state: 'submitted', requestId: 'req-a' });
    expect(await back.getJob('b')).toMatchObject({ state: 'pending' });
  });

  it('deleted before the first change: the change is refused and the file comes back with what was recorded', async () => {
    const ledger = await t.open();
    await seed(ledger, { a: 1_000_000 });
    deleteLedgerFiles(ledger.location);
    await expect(ledger.reserveForSubmit('a', null, ['pending'])).rejects.toMatchObject({ code: 'E_LEDGER_GONE' });
    await ledger.close().catch(() => undefined);
    const back = await t.open('jobs.mediabatch.db', { mode: 'read-only' });
    expect(await back.getJob('a')).toMatchObject({ state: 'pending', priceMicro: 1_000_000 });
  });

  it('replaced by another file under a run: the records are saved beside it, the other file is untouched', async () => {
    const ledger = await t.open();
    await seed(ledger, { a: 1_000_000 });
    await ledger.reserveForSubmit('a', null, ['pending']);
    for (const suffix of ['-wal', '-shm']) rmSync(`${ledger.location}${suffix}`, { force: true });
    renameSync(ledger.location, `${ledger.location}.moved`);
    writeFileSync(ledger.location, 'somebody else');
    await expect(ledger.markSubmitted('a', 'req-a')).rejects.toThrow(
      /was replaced by another file while this run was writing to it: nothing more is sent\. Everything it had recorded was saved as .*jobs\.mediabatch\.db\.rescued; move it to /,
    );
    await ledger.close().catch(() => undefined);
    expect(readFileSync(ledger.location, 'utf8')).toBe('somebody else');
    const rescued = await t.open('jobs.mediabatch.db.rescued', { mode: 'read-only' });
    expect(await rescued.getJob('a')).toMatchObject({ state: 'submitting' });
  });
});
