import { describe, expect, it } from 'vitest';
import { budgetFit, sumMicro } from '../../src/money.js';
import { planRun } from '../../src/runner/plan.js';
import { planFromLedger } from '../../src/runner/run.js';
import { jobWindows } from '../../src/runner/windows.js';
import type { Ledger, SendSelection } from '../../src/store/index.js';
import { openMemoryLedger } from '../support/memory-ledger/memory-ledger.js';
import { SEND, seed, spec, sync } from '../store/contract/fixtures.js';

/** Jobs a … e priced 1 … 5 dollars, in manifest order. */
async function fiveJobs(ledger: Ledger): Promise<void> {
  await seed(ledger, { a: 1_000_000, b: 2_000_000, c: 3_000_000, d: 4_000_000, e: 5_000_000 });
}

async function sendable(ledger: Ledger, send: SendSelection, through?: number): Promise<string[]> {
  const ids: string[] = [];
  for await (const row of jobWindows(ledger, { scope: 'manifest', send, through }, 2)) ids.push(row.id);
  return ids;
}

// Planning is about what the ledger answers, not about its file: the memory ledger keeps the same contract.
describe('planning from the ledger', () => {

  it('sends pending and skipped jobs, counts submitted ones to follow, leaves in-doubt and done ones alone', async () => {
    const ledger = openMemoryLedger();
    await fiveJobs(ledger);
    for (const id of ['a', 'b', 'c']) await ledger.reserveForSubmit(id, null, ['pending']);
    await ledger.markSubmitted('a', 'req-a');
    await ledger.markDone('a', { path: '/o/a.mp3', bytes: 1, sha256: '00' });
    await ledger.markSubmitted('b', 'req-b');
    await ledger.markInDoubt('c', 'reset');
    await ledger.markSkipped('d', 'over budget');
    const plan = await planFromLedger(ledger, SEND, null, false);
    expect(plan.send).toMatchObject({ jobs: 2, micro: 9_000_000, all: true });
    expect(plan.counts).toMatchObject({ done: 1, submitted: 1, in_doubt: 1, skipped: 1, pending: 1 });
    expect(await sendable(ledger, SEND)).toEqual(['d', 'e']);
  });

  it('counts jobs the manifest dropped after they were sent, and never sends a dropped one', async () => {
    const ledger = openMemoryLedger();
    await fiveJobs(ledger);
    await ledger.reserveForSubmit('b', null, ['pending']);
    await ledger.markSubmitted('b', 'req-b');
    await sync(ledger, [spec('a', 0)]);
    const plan = await planFromLedger(ledger, SEND, null, false);
    expect(plan.send.jobs).toBe(1);
    expect(plan.counts).toMatchObject({ pending: 1, submitted: 1 });
    expect(await sendable(ledger, SEND)).toEqual(['a']);
  });

  it('sends in-doubt jobs again only when asked', async () => {
    const ledger = openMemoryLedger();
    await fiveJobs(ledger);
    await ledger.reserveForSubmit('c', null, ['pending']);
    await ledger.markInDoubt('c', 'reset');
    expect(await sendable(ledger, SEND)).not.toContain('c');
    expect(await sendable(ledger, { resubmitInDoubt: true })).toContain('c');
  });

  it('counts earlier spend against the budget and, with partial, sends the prefix that fits', async () => {
    const ledger = openMemoryLedger();
    await seed(ledger, { spent: 2_000_000 });
    await ledger.reserveForSubmit('spent', null, ['pending']);
    await ledger.markSubmitted('spent', 'req-0');
    await sync(ledger, ['spent', 'a', 'b', 'c', 'd', 'e'].map((id, i) => spec(id, i)));
    await ledger.applyPrices(['a', 'b', 'c', 'd', 'e'].map((id, i) => ({ priceKey: `k-${id}`, priceMicro: (i + 1) * 1_000_000, source: 'quoted' })), SEND);
    const plan = await planFromLedger(ledger, SEND, 8_000_000, true);
    // 2 spent + 1 + 2 + 3 = 8 fits; + 4 would not.
    expect(plan.send).toMatchObject({ jobs: 3, micro: 6_000_000, all: false, through: { index: 3, id: 'c' } });
    expect(plan.skip).toBe(2);
    expect(plan.budget.overByMicro).toBe(2_000_000 + 15_000_000 - 8_000_000);
    expect(await sendable(ledger, SEND, plan.send.through?.index)).toEqual(['a', 'b', 'c']);
  });

  it('without partial keeps every job and reports how far over the budget it is', async () => {
    const ledger = openMemoryLedger();
    await fiveJobs(ledger);
    const plan = await planFromLedger(ledger, SEND, 10_000_000, false);
    expect(plan.send).toMatchObject({ jobs: 5, all: true });
    expect(plan.budget).toMatchObject({ toSendMicro: 15_000_000, overByMicro: 5_000_000, fitCount: 4 });
  });
});

describe('planRun', () => {
  it('a budget exactly met is within budget, and needs no fit', () => {
    const plan = planRun({
      candidates: { jobs: 2, micro: 300_000, byType: { txt2audio: 2 } },
      counts: { pending: 2, submitting: 0, submitted: 0, done: 0, failed: 0, in_doubt: 0, skipped: 0, blocked: 0 },
      spentMicro: 0,
      budgetMicro: 300_000,
      partial: true,
      fit: undefined,
    });
    expect(plan.budget).toMatchObject({ overByMicro: 0, fitCount: 2 });
    expect(plan.send).toMatchObject({ jobs: 2, all: true });
  });
});

describe('money arithmetic', () => {
  it('adds 10,000 tiny prices without drift', () => {
    expect(sumMicro(Array.from({ length: 10_000 }, () => 77))).toBe(770_000);
  });

  it('fits prices in order until the first that does not, then takes no more', () => {
    const fit = budgetFit(1_000, 4_000);
    expect([1_000, 2_000, 1_500, 500].map((price) => fit.take(price))).toEqual([true, true, false, false]);
    expect([fit.count, fit.micro]).toEqual([2, 3_000]);
  });
});
