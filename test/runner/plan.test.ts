import { describe, expect, it } from 'vitest';
import type { ResolvedJob } from '../../src/manifest/types.js';
import { checkBudget, planRun, sumUsd, type LedgerView } from '../../src/runner/plan.js';
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
const prices = new Map(jobs.map((j, i) => [j.id, (i + 1) * 1.0]));
const row = (id: string, state: JobState, requestId: string | null = null): [string, LedgerView] => [
  id,
  { id, type: 'txt2audio', state, requestId, spentUsd: 0, format: 'mp3' },
];

describe('planRun', () => {
  it('sends pending and unknown jobs, follows submitted ones, leaves in-doubt ones alone', () => {
    const rows = new Map([
      row('a', 'done'),
      row('b', 'submitted', 'req-b'),
      row('c', 'in_doubt'),
      row('d', 'skipped'),
    ]);
    const plan = planRun({ jobs, rows, prices, spentUsd: 0, budgetUsd: null, partial: false, resubmitInDoubt: false });
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
    const plan = planRun({ jobs: [jobs[0]!], rows, prices, spentUsd: 0, budgetUsd: null, partial: false, resubmitInDoubt: false });
    expect(plan.follow.map((f) => [f.job, f.requestId])).toEqual([
      [{ id: 'a', type: 'txt2audio', params: { format: 'mp3' } }, 'req-a'],
      [{ id: 'gone', type: 'txt2audio', params: { format: 'mp3' } }, 'req-gone'],
    ]);
    expect(plan.submit).toEqual([]);
  });

  it('sends in-doubt jobs again only when asked', () => {
    const rows = new Map([row('c', 'in_doubt')]);
    const plan = planRun({ jobs: [jobs[2]!], rows, prices, spentUsd: 0, budgetUsd: null, partial: false, resubmitInDoubt: true });
    expect(plan.submit.map((s) => s.reason)).toEqual(['resubmit-in-doubt']);
  });

  it('counts earlier spend against the budget and, with partial, sends the prefix that fits', () => {
    const plan = planRun({ jobs, rows: new Map(), prices, spentUsd: 2, budgetUsd: 8, partial: true, resubmitInDoubt: false });
    // 2 spent + 1 + 2 + 3 = 8 fits; + 4 would not.
    expect(plan.submit.map((s) => s.job.id)).toEqual(['a', 'b', 'c']);
    expect(plan.skip.map((s) => s.job.id)).toEqual(['d', 'e']);
    expect(plan.budget.overByUsd).toBeCloseTo(2 + 15 - 8);
  });

  it('without partial keeps every job and reports how far over the budget it is', () => {
    const plan = planRun({ jobs, rows: new Map(), prices, spentUsd: 0, budgetUsd: 10, partial: false, resubmitInDoubt: false });
    expect(plan.submit).toHaveLength(5);
    expect(plan.budget).toMatchObject({ toSendUsd: 15, overByUsd: 5, fitCount: 4 });
  });
});

describe('money arithmetic', () => {
  it('adds 10,000 tiny prices without drift', () => {
    expect(sumUsd(Array.from({ length: 10_000 }, () => 0.000077))).toBeCloseTo(0.77, 12);
  });

  it('a budget exactly met is within budget', () => {
    expect(checkBudget([{ priceUsd: 0.1 }, { priceUsd: 0.2 }], 0, 0.3)).toMatchObject({ overByUsd: 0, fitCount: 2 });
  });
});
