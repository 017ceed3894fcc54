import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import type { Ledger } from '../../../src/store/index.js';
import type { Ledgers } from '../ledger-contract.js';
import { allJobs, seed } from './fixtures.js';
import { eventsFor } from '../../support/events.js';

const HOUR_MS = 3_600_000;
const HOST = hostname();

async function lockError(call: Promise<void>): Promise<ConfigError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

export function storeContract(ledgers: Ledgers): void {
  describe('caches', () => {
    async function clocked(): Promise<{ ledger: Ledger; clock: { nowMs: number } }> {
      const clock = { nowMs: Date.parse('2025-01-01T00:00:00Z') };
      return { ledger: await ledgers.create({ nowMs: () => clock.nowMs }), clock };
    }

    it('serves prices while they are young enough and replaces one on a new quote', async () => {
      const { ledger, clock } = await clocked();
      await ledger.putPrices([
        { key: 'Kokoro|af_sky|100', priceUsd: 0.0077, source: 'quoted' },
        { key: 'Kokoro|af_sky|200', priceUsd: 0.0154, source: 'derived' },
        // A fitted per-character rate: a fraction of a micro-dollar, kept as it is.
        { key: 'Kokoro|af_sky|rate', priceUsd: 7.7e-7, source: 'derived' },
      ]);
      clock.nowMs += 2 * HOUR_MS;
      const fresh = await ledger.getPrices(3 * HOUR_MS);
      expect(fresh.get('Kokoro|af_sky|100')).toEqual({ priceUsd: 0.0077, source: 'quoted', ageMs: 2 * HOUR_MS });
      expect(fresh.get('Kokoro|af_sky|rate')).toEqual({ priceUsd: 7.7e-7, source: 'derived', ageMs: 2 * HOUR_MS });
      expect(fresh.get('unknown')).toBeUndefined();
      expect((await ledger.getPrices(HOUR_MS)).size).toBe(0);

      await ledger.putPrices([{ key: 'Kokoro|af_sky|100', priceUsd: 0.008, source: 'quoted' }]);
      const now = await ledger.getPrices(0);
      expect([...now]).toEqual([['Kokoro|af_sky|100', { priceUsd: 0.008, source: 'quoted', ageMs: 0 }]]);

      await ledger.forgetPrices(['Kokoro|af_sky|100', 'Kokoro|af_sky|200']);
      expect([...(await ledger.getPrices(3 * HOUR_MS)).keys()]).toEqual(['Kokoro|af_sky|rate']);
    });

    it('keeps one models catalogue per base URL, parsed, with an age limit', async () => {
      const { ledger, clock } = await clocked();
      const models = [{ slug: 'Kokoro', languages: [{ slug: 'en-us' }] }];
      await ledger.putCatalogue('https://api.deapi.ai', models);
      await ledger.putCatalogue('http://127.0.0.1:4010', []);
      clock.nowMs += HOUR_MS;
      expect(await ledger.getCatalogue('https://api.deapi.ai', 2 * HOUR_MS)).toEqual(models);
      expect(await ledger.getCatalogue('https://api.deapi.ai', HOUR_MS - 1)).toBeUndefined();
      expect(await ledger.getCatalogue('http://127.0.0.1:4010', 2 * HOUR_MS)).toEqual([]);
      expect(await ledger.getCatalogue('http://elsewhere', 2 * HOUR_MS)).toBeUndefined();
    });

    it('stores meta values, and everything survives re-opening', async () => {
      const { ledger } = await clocked();
      expect(await ledger.getMeta('budget')).toBeUndefined();
      await ledger.setMeta('budget', '25');
      await ledger.setMeta('budget', '30');
      await ledger.putPrices([{ key: 'k', priceUsd: 1, source: 'quoted' }]);
      const again = await ledgers.reopen(ledger);
      await ledger.close();
      expect(await again.getMeta('budget')).toBe('30');
      expect((await again.getPrices(Number.POSITIVE_INFINITY)).get('k')?.priceUsd).toBe(1);
    });
  });

  describe('read-only handle', () => {
    it('reads what a writer committed, and refuses every change as a bug', async () => {
      const writer = await ledgers.create();
      await seed(writer, { a: 2_000_000 });
      await writer.reserveForSubmit('a', null, ['pending']);
      const reader = await ledgers.reopen(writer, { readonly: true });
      expect(reader.readonly).toBe(true);
      expect((await allJobs(reader)).map((j) => j.id)).toEqual(['a']);
      expect(await reader.spentMicro()).toBe(2_000_000);
      const refusals = [
        reader.setMeta('x', 'y'),
        reader.beginIngest(),
        reader.markSubmitted('a', 'req-a'),
        reader.recoverInterrupted(),
        reader.putPrices([{ key: 'k', priceUsd: 1, source: 'quoted' }]),
        reader.acquireRunLock({ pid: process.pid, host: HOST, command: 'x' }),
      ];
      for (const refusal of refusals) await expect(refusal).rejects.toThrow(/^bug in mediabatch: .*read-only/);
      expect(await writer.getJob('a')).toMatchObject({ state: 'submitting' });
      expect(await writer.getMeta('x')).toBeUndefined();
    });
  });

  describe('run lock', () => {
    const children: ChildProcess[] = [];
    afterEach(async () => {
      for (const child of children.splice(0)) {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill();
          await once(child, 'exit');
        }
      }
    });

    it('refuses while the holder on this host is alive, and takes it over once it is gone', async () => {
      const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
      children.push(child);
      await once(child, 'spawn');
      const holder = await ledgers.create();
      await holder.acquireRunLock({ pid: child.pid!, host: HOST, command: 'mediabatch run jobs.yaml' });
      const ledger = await ledgers.reopen(holder);

      const error = await lockError(ledger.acquireRunLock({ pid: process.pid, host: HOST, command: 'mediabatch run' }));
      expect(error.code).toBe('E_LOCKED');
      expect(error.message).toContain(`is in use by mediabatch pid ${child.pid} on ${HOST} since `);

      child.kill();
      await once(child, 'exit');
      await ledger.acquireRunLock({ pid: process.pid, host: HOST, command: 'mediabatch run' });
      const events = await eventsFor(ledger, null);
      expect(events.map((e) => e.kind).slice(-3)).toEqual(['lock_acquired', 'lock_taken_over', 'lock_acquired']);
      expect(events.at(-2)?.detail).toMatchObject({ deadPid: child.pid, host: HOST, command: 'mediabatch run jobs.yaml' });
    });

    it('treats a holder on another host as alive', async () => {
      const holder = await ledgers.create();
      await holder.acquireRunLock({ pid: 1, host: 'build-server-7', command: 'mediabatch run' });
      const ledger = await ledgers.reopen(holder);
      expect((await lockError(ledger.acquireRunLock({ pid: process.pid, host: HOST, command: 'x' }))).code).toBe('E_LOCKED');
    });

    it('a second handle is refused until the first releases or closes', async () => {
      const first = await ledgers.create();
      const second = await ledgers.reopen(first);
      await first.acquireRunLock({ pid: process.pid, host: HOST, command: 'mediabatch run a.yaml' });
      expect((await lockError(second.acquireRunLock({ pid: process.pid, host: HOST, command: 'b' }))).code).toBe('E_LOCKED');
      await first.releaseRunLock();
      await second.acquireRunLock({ pid: process.pid, host: HOST, command: 'b' });
      await second.close();
      await first.acquireRunLock({ pid: process.pid, host: HOST, command: 'a' });
    });
  });
}
