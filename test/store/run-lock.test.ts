import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { LedgerLockedError } from '../../src/store/index.js';
import { allJobs, seed, SEND } from './contract/fixtures.js';
import { useTempLedgers } from './helpers.js';

const HOST = hostname();

describe('SQLite ledger: run lock', () => {
  const t = useTempLedgers();

  it('a refusal names the holder, since when, and how to clear a lock whose holder is gone', async () => {
    const holder = await t.open(undefined, { nowMs: () => Date.parse('2025-01-01T00:00:00Z') });
    await holder.acquireRunLock({ pid: 4242, host: 'build-server-7', command: 'mediabatch run jobs.yaml' });
    const ledger = await t.open();
    const error = await ledger.acquireRunLock({ pid: process.pid, host: HOST, command: 'mediabatch run' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ code: 'E_LOCKED', exitCode: 4 });
    expect((error as LedgerLockedError).holder).toEqual({ pid: 4242, host: 'build-server-7', command: 'mediabatch run jobs.yaml' });
    expect((error as Error).message).toBe(
      `ledger ${ledger.location} is in use by mediabatch pid 4242 on build-server-7 since 2025-01-01T00:00:00.000Z (mediabatch run jobs.yaml): wait for it to finish or stop it; if it is not running, delete the lock with: sqlite3 "${ledger.location}" "DELETE FROM run_lock"`,
    );
  });

  it('a copy holds what was committed, opens as a ledger of its own, and what it changes stays in it', async () => {
    const held = await t.open();
    await seed(held, { a: 100, b: 200 });
    await held.acquireRunLock({ pid: 4242, host: 'build-server-7', command: 'run' });
    await held.copyTo(`${t.dir()}/copy.db`);
    const copy = await t.open('copy.db');
    expect((await allJobs(copy)).map((job) => [job.id, job.priceMicro])).toEqual([['a', 100], ['b', 200]]);
    await copy.applyPrices([{ priceKey: 'k-a', priceMicro: 999, source: 'quoted' }], SEND);
    expect((await allJobs(held)).map((job) => job.priceMicro)).toEqual([100, 200]);
  });
});
