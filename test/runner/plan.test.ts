import { describe, expect, it } from 'vitest';
import type { ResolvedJob } from '../../src/manifest/types.js';
import { sumMicro } from '../../src/money.js';
import { checkBudget, planRun, type LedgerView } from '../../src/runner/plan.js';
import type { JobState } from '../../src/store/index.js';

function job(id: string, index: number): ResolvedJob {
  return {
    id,
    idDerived: false,
    index,
    contentHash: `hash-${id}`,
    position: { line: index + 1, col: 1 },
    fieldPositions: {},
    type: 'txt2audio',
    params: { model: 'Kokoro', voice: 'af_sky', lang: 'en-us', speed: 1, format: 'mp3', sample_rate: 24000 },
    text: `text ${id}`,
    textChars: 6 + id.length,
    images: {},
  };
}

const jobs = ['a', 'b', 'c', 'd', 'e'].map(job);
const prices = new Map(jobs.map((j, i) => [j.id, (i + 1) * 1_000_000]));
const row = (id: string, state: JobState, requestId: string | null = null): [string, LedgerView] => [
  id,
  { id, type: 'txt2audio', state, requestId, spentMicro: 0, format: 'mp3' },
];

describe('planRun', () => {
  it('sends pending and unknown jobs, follows submitted ones, leaves in-doubt ones alone', () => {
    const rows = new Map([
      row('a', 'done'),
      row('b', 'submitted', 'req-b'),
      row('c', 'in_doubt'),
      row('d', 'skipped'),
    ]);
    const plan = planRun({ jobs, rows, prices, spentMicro: 0, budgetMicro: null, partial: false, resubmitInDoubt: false });
    expect(plan.submit.map((s) => [s.job.id, s.reason])).toEqual([
      ['d', 'unskipped'],
      ['e', 'new'],
    ]);
    expect(plan.follow.map((f) => [f.job.id, f.requestId])).toEqual([['b', 'req-b']]);
    expect(plan.inDoubt.map((j) => j.id)).toEqual(['c']);
    expect(plan.done.map((j) => j.id)).toEqual(['a']);
  });

  it('follows every submitted job of the ledger, those the manifest no longer lists too', () => {
    const rows = new Map([row('a', 'submitted', 'req-a'), row('gone', 'submitted', 'req-gone'), row('old', 'done', 'req-old')]);
    const plan = planRun({ jobs: [jobs[0]!], rows, prices, spentMicro: 0, budgetMicro: null, partial: false, resubmitInDoubt: false });
    expect(plan.follow.map((f) => [f.job, f.requestId])).toEqual([
      [{ id: 'a', type: 'txt2audio', params: { format: 'mp3' } }, 'req-a'],
      [{ id: 'gone', type: 'txt2audio', params: { format: 'mp3' } }, 'req-gone'],
    ]);
    expect(plan.submit).toEqual([]);
  });

  it('sends in-doubt jobs again only when asked', () => {
    const rows = new Map([row('c', 'in_doubt')]);
    const plan = planRun({ jobs: [jobs[2]!], rows, prices, spentMicro: 0, budgetMicro: null, partial: false, resubmitInDoubt: true });
    expect(plan.submit.map((s) => s.reason)).toEqual(['resubmit-in-doubt']);
  });

  it('counts earlier spend against the budget and, with partial, sends the prefix that fits', () => {
    const plan = planRun({ jobs, rows: new Map(), prices, spentMicro: 2_000_000, budgetMicro: 8_000_000, partial: true, resubmitInDoubt: false });
    // 2 spent + 1 + 2 + 3 = 8 fits; + 4 would not.
    expect(plan.submit.map((s) => s.job.id)).toEqual(['a', 'b', 'c']);
    expect(plan.skip.map((s) => s.job.id)).toEqual(['d', 'e']);
    expect(plan.budget.overByMicro).toBe(2_000_000 + 15_000_000 - 8_000_000);
  });

  it('without partial keeps every job and reports how far over the budget it is', () => {
    const plan = planRun({ jobs, rows: new Map(), prices, spentMicro: 0, budgetMicro: 10_000_000, partial: false, resubmitInDoubt: false });
    expect(plan.submit).toHaveLength(5);
    expect(plan.budget).toMatchObject({ toSendMicro: 15_000_000, overByMicro: 5_000_000, fitCount: 4 });
  });
});

describe('money arithmetic', () => {
  it('adds 10,000 tiny prices without drift', () => {
    expect(sumMicro(Array.from({ length: 10_000 }, () => 77))).toBe(770_000);
  });

  it('a budget exactly met is within budget', () => {
    expect(checkBudget([{ priceMicro: 100_000 }, { priceMicro: 200_000 }], 0, 300_000)).toMatchObject({ overByMicro: 0, fitCount: 2 });
  });
});
