import { describe, expect, it } from 'vitest';
import { planLimits } from '../../src/jobs/plans.js';
import type { ResolvedJob } from '../../src/jobs/index.js';
import { formatDuration } from '../../src/pricing/duration.js';
import { buildCostReport, type CostReportInput } from '../../src/pricing/report.js';
import { usdToMicro } from '../../src/money.js';
import { costInput, speechJob, videoJob } from './jobs.js';

/** Prices set by hand: the report is arithmetic over whatever the ledger holds. */
function input(
  jobs: ResolvedJob[],
  prices: Record<string, number>,
  over: Partial<Omit<CostReportInput, 'lines' | 'fit'>> & { alreadyDoneIds?: Set<string> } = {},
): CostReportInput {
  return costInput(jobs, (job) => ({ priceMicro: usdToMicro(prices[job.id] ?? 0, 'up') }), over);
}

const JOBS = [
  speechJob('a', 100, {}, 0),
  speechJob('b', 100, { model: 'Chatterbox', voice: 'default', lang: 'en' }, 1),
  videoJob('c', {}, 2),
  speechJob('d', 100, {}, 3),
];
const PRICES = { a: 1, b: 2, c: 5, d: 0.5 };

describe('buildCostReport', async () => {
  it('totals by type and model over the whole manifest', async () => {
    const report = await buildCostReport(input(JOBS, PRICES));
    expect(report.totalMicro).toBe(8_500_000);
    expect(report.byType).toEqual({ txt2audio: { jobs: 3, totalMicro: 3_500_000 }, img2video: { jobs: 1, totalMicro: 5_000_000 } });
    expect(report.byModel).toEqual({
      Kokoro: { jobs: 2, totalMicro: 1_500_000 },
      Chatterbox: { jobs: 1, totalMicro: 2_000_000 },
      Ltxv_13B_0_9_8_Distilled_FP8: { jobs: 1, totalMicro: 5_000_000 },
    });
    expect(report).toMatchObject({ withinBudget: true, leftMicro: null, fitCount: 4, priceCalls: 2 });
  });

  it('counts earlier spend against the budget and leaves paid jobs out of what is to spend', async () => {
    const report = await buildCostReport(
      input(JOBS, PRICES, { spentMicro: 1_000_000, alreadyDoneIds: new Set(['a']), budgetMicro: 10_000_000, balanceMicro: 7_000_000 }),
    );
    expect(report).toMatchObject({
      totalMicro: 8_500_000,
      jobsToSend: 3,
      toSpendMicro: 7_500_000,
      spentMicro: 1_000_000,
      leftMicro: 1_500_000,
      withinBudget: true,
      overByMicro: 0,
      balanceMicro: 7_000_000,
      balanceCovers: false,
    });
  });

  it('says by how much a budget is exceeded and how many jobs fit, as a prefix in manifest order', async () => {
    // b ($2) does not fit after a ($1) with $2.50 left; d ($0.50) would, but the prefix stops at b.
    const report = await buildCostReport(input(JOBS, PRICES, { spentMicro: 500_000, budgetMicro: 3_000_000 }));
    expect(report).toMatchObject({ withinBudget: false, overByMicro: 6_000_000, leftMicro: -6_000_000, fitCount: 1, fitMicro: 1_000_000 });
  });

  it('estimates days on Basic, where the daily cap binds', async () => {
    const jobs = Array.from({ length: 1000 }, (_, i) => speechJob(`t${i}`, 50, {}, i));
    const prices = Object.fromEntries(jobs.map((job) => [job.id, 0.0001]));
    const basic = await buildCostReport(input(jobs, prices, { plan: planLimits('basic'), planName: 'basic' }));
    // Status polls (200/day, one per job at least) bind before submits (300/day).
    expect(basic.durationText).toBe('about 4 days 4 minutes (Basic: status polls 200/day)');
    expect(basic.duration.byClass.map((c) => [c.what, formatDuration(c.durationMs), c.limitText])).toEqual([
      ['txt2audio', '3 days 20 minutes', '300/day'],
      ['status', '4 days 4 minutes', '200/day'],
    ]);
    // Followed by webhooks, the submits alone pace it: a job whose deliveries arrive needs no status call.
    expect(basic.duration.withWebhooks).toEqual({ durationMs: expect.any(Number), text: 'about 3 days 20 minutes (Basic: txt2audio 300/day)', statusCallsMin: 0 });
    expect(basic.duration).toMatchObject({ statusPollsMin: 1000, statusPerDay: 200 });
    const premium = await buildCostReport(input(jobs, prices));
    expect(premium.durationText).toBe('about 3 minutes (Premium: txt2audio 300/min)');
    expect(premium.duration.statusPerDay).toBeUndefined();
  });

  it('paces video and speech separately on Basic', async () => {
    const jobs = [...Array.from({ length: 10 }, (_, i) => videoJob(`v${i}`, {}, i)), speechJob('s', 9, {}, 10)];
    const prices = Object.fromEntries(jobs.map((job) => [job.id, 0.1]));
    const report = await buildCostReport(input(jobs, prices, { plan: planLimits('basic'), planName: 'basic' }));
    expect(report.durationText).toBe('about 10 minutes (Basic: img2video 1/min)');
    expect(report.duration.statusPollsMin).toBe(11);
  });

  it('has nothing to time when everything is already paid', async () => {
    const report = await buildCostReport(input(JOBS, PRICES, { alreadyDoneIds: new Set(['a', 'b', 'c', 'd']) }));
    expect(report).toMatchObject({ toSpendMicro: 0, jobsToSend: 0, durationText: 'nothing to send' });
  });
});
