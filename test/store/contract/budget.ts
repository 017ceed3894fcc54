import { describe, expect, it } from 'vitest';
import type { Ledger, ReserveResult } from '../../../src/store/index.js';
import type { Ledgers } from '../ledger-contract.js';
import { expectBug, ids, seed, spec, sync } from './fixtures.js';
import { eventsFor } from '../../support/events.js';

/** Reserves every job at once, as concurrent submits do, each through whichever handle `via` picks. */
async function reserveAll(jobs: readonly string[], budgetMicro: number, via: (i: number) => Ledger): Promise<Map<string, ReserveResult>> {
  const answers = await Promise.all(jobs.map((id, i) => via(i).reserveForSubmit(id, budgetMicro, ['pending'])));
  return new Map(jobs.map((id, i) => [id, answers[i]!]));
}

export function budgetContract(ledgers: Ledgers): void {
  describe('reserveForSubmit: the budget check before every submit', () => {
    it('reserves while the whole spend stays within the budget, and frees what was not taken', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 1_000_000, b: 2_000_000, c: 3_000_000 });
      expect(await ledger.reserveForSubmit('a', 5_000_000, ['pending'])).toBe('reserved');
      expect(await ledger.reserveForSubmit('b', 5_000_000, ['pending'])).toBe('reserved');
      expect(await ledger.spentMicro()).toBe(3_000_000);
      expect(await ledger.reserveForSubmit('c', 5_000_000, ['pending'])).toBe('over-budget');
      expect(await ledger.getJob('c')).toMatchObject({ state: 'pending', spentMicro: 0, attempts: 0 });

      await ledger.markNotTaken('b', '503 Service Unavailable');
      expect(await ledger.spentMicro()).toBe(1_000_000);
      expect(await ledger.reserveForSubmit('c', 5_000_000, ['pending'])).toBe('reserved');
      expect(await ledger.spentMicro()).toBe(4_000_000);
      expect((await eventsFor(ledger, 'c')).at(-1)?.detail).toEqual({
        priceMicro: 3_000_000,
        carriedMicro: 0,
        budgetMicro: 5_000_000,
        spentTotalMicro: 4_000_000,
        spentMicro: 3_000_000,
      });
    });

    it('counts what earlier runs spent, and stops exactly at the cap', async () => {
      const first = await ledgers.create();
      await seed(first, { a: 1_500_000, b: 2_000_000, c: 10_000 });
      await first.reserveForSubmit('a', null, ['pending']);
      await first.markSubmitted('a', 'req-a');
      await first.markDone('a', { path: '/o/a.mp3', bytes: 1, sha256: '00' });
      const later = await ledgers.reopen(first);
      await first.close();

      expect(await later.spentMicro()).toBe(1_500_000);
      expect(await later.reserveForSubmit('b', 3_500_000, ['pending'])).toBe('reserved');
      expect(await later.reserveForSubmit('c', 3_500_000, ['pending'])).toBe('over-budget');
    });

    it('ten jobs of $0.10 fit a $1 budget exactly, the eleventh does not', async () => {
      const ledger = await ledgers.create();
      const jobs = ids(11);
      await seed(ledger, Object.fromEntries(jobs.map((id) => [id, 100_000])));
      const results: ReserveResult[] = [];
      for (const id of jobs) results.push(await ledger.reserveForSubmit(id, 1_000_000, ['pending']));
      expect(results.filter((r) => r === 'reserved')).toHaveLength(10);
      expect(results.at(-1)).toBe('over-budget');
      expect(await ledger.spentMicro()).toBe(1_000_000);
    });

    it('adds an in_doubt job’s resend to what its first attempt may have cost, and keeps that when the resend is released', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 2_000_000, b: 1_000_000 });
      await ledger.reserveForSubmit('a', null, ['pending']);
      await ledger.markInDoubt('a', 'connection reset');
      expect(await ledger.reserveForSubmit('a', 3_000_000, ['pending', 'skipped'])).toBe('wrong-state');
      // The first attempt may have been charged: a resend under a $3 cap would make $4.
      expect(await ledger.reserveForSubmit('a', 3_000_000, ['in_doubt'])).toBe('over-budget');
      expect(await ledger.reserveForSubmit('a', 4_000_000, ['in_doubt'])).toBe('reserved');
      expect(await ledger.getJob('a')).toMatchObject({ state: 'submitting', spentMicro: 4_000_000, attempts: 2 });
      expect(await ledger.spentMicro()).toBe(4_000_000);
      expect(await ledger.reserveForSubmit('b', 4_500_000, ['pending'])).toBe('over-budget');
      // The resend provably not taken: only the first attempt's possible charge stays counted.
      await ledger.markNotTaken('a', '503');
      expect(await ledger.getJob('a')).toMatchObject({ state: 'pending', spentMicro: 2_000_000 });
      expect(await ledger.spentMicro()).toBe(2_000_000);
      // Sent once more and refunded after an error: still the first attempt's $2, not zero.
      await ledger.reserveForSubmit('a', null, ['pending']);
      await ledger.markSubmitted('a', 'req-2');
      await ledger.markFailedRemote('a', { reason: 'WORKER_ERROR', retryable: true, refunded: true });
      expect(await ledger.spentMicro()).toBe(2_000_000);
    });

    it('answers wrong-state for a job already on its way, and refuses an unpriced one as a bug', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 1_000_000 });
      await sync(ledger, [spec('a', 0), { ...spec('free', 1), type: 'img2video', paramsJson: '{}' }]);
      await ledger.reserveForSubmit('a', null, ['pending']);
      expect(await ledger.reserveForSubmit('a', null, ['pending'])).toBe('wrong-state');
      const error = await expectBug(ledger.reserveForSubmit('free', null, ['pending']), 'free');
      expect(error.message).toBe('bug in mediabatch: job "free" has no price; prices are set before anything is reserved');
      expect(await ledger.getJob('free')).toMatchObject({ state: 'pending', spentMicro: 0 });
    });

    it('the spend carries no drift after reservations are released', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 100_000, b: 200_000, c: 300_000 });
      for (const id of ['a', 'b', 'c']) expect(await ledger.reserveForSubmit(id, null, ['pending'])).toBe('reserved');
      expect(await ledger.spentMicro()).toBe(600_000);
      for (const id of ['a', 'b', 'c']) await ledger.markNotTaken(id, '503');
      expect(await ledger.spentMicro()).toBe(0);
      expect(Object.is(await ledger.spentMicro(), -0)).toBe(false);
    });

    it('two handles reserving in turn never overshoot the budget together', async () => {
      const one = await ledgers.create();
      const jobs = ids(20);
      await seed(one, Object.fromEntries(jobs.map((id) => [id, 300_000])));
      const two = await ledgers.reopen(one);
      // Each worker believes it alone has $2.00 of headroom; the ledger is what holds them to it.
      const results: ReserveResult[] = [];
      for (const [i, id] of jobs.entries()) results.push(await (i % 2 === 0 ? one : two).reserveForSubmit(id, 2_000_000, ['pending']));
      expect(results.filter((r) => r === 'reserved')).toHaveLength(6);
      expect(await one.spentMicro()).toBe(1_800_000);
      expect((await two.countsByState()).submitting).toBe(6);
    });

    it('many reservations at once, as concurrent submits ask: exactly those that fit are reserved', async () => {
      const ledger = await ledgers.create();
      const jobs = ids(50);
      await seed(ledger, Object.fromEntries(jobs.map((id) => [id, 300_000])));
      const answers = await reserveAll(jobs, 2_000_000, () => ledger);
      expect([...answers.values()].filter((r) => r === 'reserved')).toHaveLength(6);
      expect([...answers.values()].filter((r) => r === 'over-budget')).toHaveLength(44);
      expect(await ledger.spentMicro()).toBe(1_800_000);
      const counts = await ledger.countsByState();
      expect(counts).toMatchObject({ submitting: 6, pending: 44 });
      for (const [id, answer] of answers) expect((await ledger.getJob(id))?.state).toBe(answer === 'reserved' ? 'submitting' : 'pending');
    });

    it('many reservations at once through two handles, prices of every size: never past the budget, and nothing refused that fit', async () => {
      const one = await ledgers.create();
      const jobs = ids(60);
      const prices = Object.fromEntries(jobs.map((id, i) => [id, 10_000 + ((i * 7919) % 13) * 37_003]));
      await seed(one, prices);
      const two = await ledgers.reopen(one);
      const budget = 3_141_592;
      const answers = await reserveAll(jobs, budget, (i) => (i % 3 === 0 ? two : one));
      const spent = await one.spentMicro();
      expect(spent).toBeLessThanOrEqual(budget);
      const reserved = jobs.filter((id) => answers.get(id) === 'reserved');
      expect(spent).toBe(reserved.reduce((sum, id) => sum + prices[id]!, 0));
      // The spend only grew while they ran: a job refused then would not fit now either.
      for (const id of jobs.filter((j) => answers.get(j) === 'over-budget')) expect(spent + prices[id]!, id).toBeGreaterThan(budget);
      expect((await two.countsByState()).submitting).toBe(reserved.length);
    });
  });
}
