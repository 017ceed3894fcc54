import { describe, expect, it } from 'vitest';
import { seed, useTempLedgers } from './helpers.js';

describe('reserveForSubmit', () => {
  const t = useTempLedgers();

  it('reserves while the whole spend stays within the budget, and frees what was not taken', () => {
    const ledger = t.open();
    seed(ledger, { a: 1, b: 2, c: 3 });
    expect(ledger.reserveForSubmit('a', 5, ['pending'])).toBe('reserved');
    expect(ledger.reserveForSubmit('b', 5, ['pending'])).toBe('reserved');
    expect(ledger.spentUsd()).toBe(3);
    expect(ledger.reserveForSubmit('c', 5, ['pending'])).toBe('over-budget');
    expect(ledger.getJob('c')).toMatchObject({ state: 'pending', spentUsd: 0, attempts: 0 });

    ledger.markNotTaken('b', '503 Service Unavailable');
    expect(ledger.spentUsd()).toBe(1);
    expect(ledger.reserveForSubmit('c', 5, ['pending'])).toBe('reserved');
    expect(ledger.spentUsd()).toBe(4);
    expect(ledger.eventsFor('c').at(-1)?.detail).toEqual({ priceUsd: 3, carriedUsd: 0, budgetUsd: 5, spentTotalUsd: 4, spentUsd: 3 });
  });

  it('counts what earlier runs spent, and stops exactly at the cap', () => {
    const first = t.open();
    seed(first, { a: 1.5, b: 2, c: 0.01 });
    first.reserveForSubmit('a', null, ['pending']);
    first.markSubmitted('a', 'req-a');
    first.markDone('a', { path: '/o/a.mp3', bytes: 1, sha256: '00' });
    const path = first.path;
    first.close();

    const later = t.open(path.split('/').pop());
    expect(later.spentUsd()).toBe(1.5);
    expect(later.reserveForSubmit('b', 3.5, ['pending'])).toBe('reserved');
    expect(later.reserveForSubmit('c', 3.5, ['pending'])).toBe('over-budget');
  });

  it('tolerates float dust at the cap: ten jobs of $0.1 fit a $1 budget', () => {
    const ledger = t.open();
    const ids = Array.from({ length: 11 }, (_, i) => `j${i}`);
    seed(ledger, Object.fromEntries(ids.map((id) => [id, 0.1])));
    const results = ids.map((id) => ledger.reserveForSubmit(id, 1, ['pending']));
    expect(results.filter((r) => r === 'reserved')).toHaveLength(10);
    expect(results.at(-1)).toBe('over-budget');
  });

  it('adds an in_doubt job’s resend to what its first attempt may have cost, and keeps that when the resend is released', () => {
    const ledger = t.open();
    seed(ledger, { a: 2, b: 1 });
    ledger.reserveForSubmit('a', null, ['pending']);
    ledger.markInDoubt('a', 'connection reset');
    expect(ledger.reserveForSubmit('a', 3, ['pending', 'skipped'])).toBe('wrong-state');
    // The first attempt may have been charged: a resend under a $3 cap would make $4.
    expect(ledger.reserveForSubmit('a', 3, ['in_doubt'])).toBe('over-budget');
    expect(ledger.reserveForSubmit('a', 4, ['in_doubt'])).toBe('reserved');
    expect(ledger.getJob('a')).toMatchObject({ state: 'submitting', spentUsd: 4, attempts: 2 });
    expect(ledger.spentUsd()).toBe(4);
    expect(ledger.reserveForSubmit('b', 4.5, ['pending'])).toBe('over-budget');
    // The resend provably not taken: only the first attempt's possible charge stays counted.
    ledger.markNotTaken('a', '503');
    expect(ledger.getJob('a')).toMatchObject({ state: 'pending', spentUsd: 2 });
    expect(ledger.spentUsd()).toBe(2);
    // Sent once more and refunded after an error: still the first attempt's $2, not zero.
    ledger.reserveForSubmit('a', null, ['pending']);
    ledger.markSubmitted('a', 'req-2');
    ledger.markFailedRemote('a', { reason: 'WORKER_ERROR', retryable: true, refunded: true });
    expect(ledger.spentUsd()).toBe(2);
  });

  it('answers wrong-state for a job already on its way, and throws for an unpriced one', () => {
    const ledger = t.open();
    seed(ledger, { a: 1 });
    ledger.syncJobs([{ id: 'free', index: 1, contentHash: 'h', type: 'img2video', paramsJson: '{}' }]);
    ledger.reserveForSubmit('a', null, ['pending']);
    expect(ledger.reserveForSubmit('a', null, ['pending'])).toBe('wrong-state');
    expect(() => ledger.reserveForSubmit('free', null, ['pending'])).toThrow(
      'bug in mediabatch: job "free" has no price; prices are set before anything is reserved',
    );
  });

  it('two connections reserving in turn never overshoot the budget together', () => {
    const one = t.open();
    const ids = Array.from({ length: 20 }, (_, i) => `j${String(i).padStart(2, '0')}`);
    seed(one, Object.fromEntries(ids.map((id) => [id, 0.3])));
    const two = t.open(one.path.split('/').pop());
    // Each worker believes it alone has $2.00 of headroom; the ledger is what holds them to it.
    const results = ids.map((id, i) => (i % 2 === 0 ? one : two).reserveForSubmit(id, 2, ['pending']));
    expect(results.filter((r) => r === 'reserved')).toHaveLength(6);
    expect(one.spentUsd()).toBeCloseTo(1.8, 9);
    expect(two.countsByState().submitting).toBe(6);
  });
});
