import { describe, expect, it } from 'vitest';
import { planLimits } from '../../src/jobs/plans.js';
import type { ResolvedJob } from '../../src/manifest/types.js';
import { formatDuration } from '../../src/pricing/duration.js';
import { buildCostReport, type CostReportInput } from '../../src/pricing/report.js';
import type { JobPrice, PricingResult } from '../../src/pricing/types.js';
import { speechJob, videoJob } from './jobs.js';

/** Prices set by hand: the report is arithmetic over whatever priceJobs found. */
function pricing(prices: Record<string, number>, priceCalls = 2): PricingResult {
  const map = new Map<string, JobPrice>(
    Object.entries(prices).map(([id, priceUsd]) => [id, { priceUsd, source: 'quoted', key: `k-${id}` }]),
  );
  return { prices: map, priceCalls, groups: [], changes: [] };
}

function input(jobs: ResolvedJob[], prices: Record<string, number>, over: Partial<CostReportInput> = {}): CostReportInput {
  return {
    jobs,
    pricing: pricing(prices),
    spentUsd: 0,
    budgetUsd: null,
    plan: planLimits('premium'),
    planName: 'premium',
    concurrency: 8,
    ...over,
  };
}

const JOBS = [
  speechJob('a', 100, {}, 0),
  speechJob('b', 100, { model: 'Chatterbox', voice: 'default', lang: 'en' }, 1),
  videoJob('c', {}, 2),
  speechJob('d', 100, {}, 3),
];
const PRICES = { a: 1, b: 2, c: 5, d: 0.5 };

describe('buildCostReport', () => {
  it('totals by type and model over the whole manifest', () => {
    const report = buildCostReport(input(JOBS, PRICES));
    expect(report.totalUsd).toBe(8.5);
    expect(report.byType).toEqual({ txt2audio: { jobs: 3, totalUsd: 3.5 }, img2video: { jobs: 1, totalUsd: 5 } });
    expect(report.byModel).toEqual({
      Kokoro: { jobs: 2, totalUsd: 1.5 },
      Chatterbox: { jobs: 1, totalUsd: 2 },
      Ltxv_13B_0_9_8_Distilled_FP8: { jobs: 1, totalUsd: 5 },
    });
    expect(report).toMatchObject({ withinBudget: true, leftUsd: null, fitCount: 4, priceCalls: 2 });
  });

  it('counts earlier spend against the budget and leaves paid jobs out of what is to spend', () => {
    const report = buildCostReport(
      input(JOBS, PRICES, { spentUsd: 1, alreadyDoneIds: new Set(['a']), budgetUsd: 10, balanceUsd: 7 }),
    );
    expect(report).toMatchObject({
      totalUsd: 8.5,
      jobsToSend: 3,
      toSpendUsd: 7.5,
      spentUsd: 1,
      leftUsd: 1.5,
      withinBudget: true,
      overByUsd: 0,
      balanceUsd: 7,
      balanceCovers: false,
    });
  });

  it('says by how much a budget is exceeded and how many jobs fit, as a prefix in manifest order', () => {
    // b ($2) does not fit after a ($1) with $2.50 left; d ($0.50) would, but the prefix stops at b.
    const report = buildCostReport(input(JOBS, PRICES, { spentUsd: 0.5, budgetUsd: 3 }));
    expect(report).toMatchObject({ withinBudget: false, overByUsd: 6, leftUsd: -6, fitCount: 1, fitUsd: 1 });
  });

  it('estimates days on Basic, where the daily cap binds', () => {
    const jobs = Array.from({ length: 1000 }, (_, i) => speechJob(`t${i}`, 50, {}, i));
    const prices = Object.fromEntries(jobs.map((job) => [job.id, 0.0001]));
    const basic = buildCostReport(input(jobs, prices, { plan: planLimits('basic'), planName: 'basic' }));
    // Status polls (200/day, one per job at least) bind before submits (300/day).
    expect(basic.durationText).toBe('about 4 days 4 minutes (Basic: status polls 200/day)');
    expect(basic.duration.byClass.map((c) => [c.what, formatDuration(c.durationMs), c.limitText])).toEqual([
      ['txt2audio', '3 days 20 minutes', '300/day'],
      ['status', '4 days 4 minutes', '200/day'],
    ]);
    const premium = buildCostReport(input(jobs, prices));
    expect(premium.durationText).toBe('about 3 minutes (Premium: txt2audio 300/min)');
  });

  it('paces video and speech separately on Basic', () => {
    const jobs = [...Array.from({ length: 10 }, (_, i) => videoJob(`v${i}`, {}, i)), speechJob('s', 9, {}, 10)];
    const prices = Object.fromEntries(jobs.map((job) => [job.id, 0.1]));
    const report = buildCostReport(input(jobs, prices, { plan: planLimits('basic'), planName: 'basic' }));
    expect(report.durationText).toBe('about 10 minutes (Basic: img2video 1/min)');
    expect(report.duration.statusPollsMin).toBe(11);
  });

  it('has nothing to time when everything is already paid', () => {
    const report = buildCostReport(input(JOBS, PRICES, { alreadyDoneIds: new Set(['a', 'b', 'c', 'd']) }));
    expect(report).toMatchObject({ toSpendUsd: 0, jobsToSend: 0, durationText: 'nothing to send' });
  });
});
