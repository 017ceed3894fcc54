import { describe, expect, it } from 'vitest';
import { planLimits } from '../../src/jobs/plans.js';
import { priceJobs } from '../../src/pricing/price-jobs.js';
import { buildCostReport } from '../../src/pricing/report.js';
import { costReportJson, formatCostReport } from '../../src/report/cost-report.js';
import { laws, memoryCache, quoteWith, speechJob, speechQuoter, videoJob, videoQuoter } from '../pricing/jobs.js';

async function sampleReport(budgetMicro: number | null) {
  const jobs = [
    ...Array.from({ length: 8 }, (_, i) => speechJob(`line-${i}`, 1000 + i * 500, {}, i)),
    videoJob('waves', {}, 8),
    videoJob('dunes', {}, 9),
  ];
  const speech = speechQuoter(laws.roundedUp4);
  const video = videoQuoter();
  const pricing = await priceJobs(jobs, { quote: quoteWith(speech, video), cache: memoryCache() });
  return buildCostReport({
    jobs,
    pricing,
    spentMicro: 50_000,
    alreadyDoneIds: new Set(['line-0']),
    budgetMicro,
    balanceMicro: 200_000,
    plan: planLimits('basic'),
    planName: 'basic',
    concurrency: 8,
  });
}

describe('formatCostReport', () => {
  it('renders tables, money lines, over-budget advice and pace', async () => {
    const report = await sampleReport(300_000);
    expect(formatCostReport(report, { color: false, maxJobLines: 4 })).toMatchInlineSnapshot(`
      "Cost estimate: 10 jobs, Basic plan

      Jobs
        id      type       model    price  source
        line-0  txt2audio  Kokoro  $0.016  quoted   already sent
        line-1  txt2audio  Kokoro  $0.024  derived
        line-2  txt2audio  Kokoro  $0.032  derived
        line-3  txt2audio  Kokoro   $0.04  derived
        … and 6 more (every job is in the CSV report)

      By type
        type       jobs    total
        txt2audio     8   $0.352
        img2video     2  $0.0796

      By model
        model                         jobs    total
        Kokoro                           8   $0.352
        Ltxv_13B_0_9_8_Distilled_FP8     2  $0.0796

      Price groups
        group                                                    jobs  lengths  method          calls    total
        txt2audio Kokoro af_sky en-us 1 mp3 24000                   8        8  linear-derived      3   $0.352
        img2video Ltxv_13B_0_9_8_Distilled_FP8 768 432 1 120 30     2        -  per-key             1  $0.0796

      Money
        Total (whole manifest)   $0.432
        Already spent (ledger)    $0.05
        To spend (9 jobs)        $0.416
        Budget                    $0.30
        Left after the run      -$0.166
        Balance                   $0.20
        Over budget by $0.166. With --partial, the first 5 of 9 jobs to send fit ($0.20); the rest would be skipped.
        Warning: the balance $0.20 does not cover the $0.416 to spend; a run would refuse to start.

      Pace
        Price calls: 4 (prices: 5 quoted, 5 derived, 0 cached)
        Duration: about 2 minutes (Basic: img2video 1/min), at least 9 status polls
        Status calls: at least 9 polling (Basic allows 200/day); with --webhook-url only for jobs not heard from
        Duration with --webhook-url: about 2 minutes (Basic: img2video 1/min)
      "
    `);
  });

  it('colours only when asked', async () => {
    const report = await sampleReport(null);
    expect(formatCostReport(report, { color: false })).not.toContain('\u001b[');
    expect(formatCostReport(report, { color: true })).toContain('\u001b[1m');
  });
});

describe('costReportJson', () => {
  it("has the estimate fields scripts rely on, with their names", async () => {
    const json = costReportJson(await sampleReport(10_000_000));
    expect(Object.keys(json).slice(0, 7)).toEqual(['total', 'spent', 'budget', 'withinBudget', 'priceCalls', 'jobs', 'byModel']);
    expect(json.jobs[0]).toEqual({ id: 'line-0', type: 'txt2audio', model: 'Kokoro', price: 0.016, priceSource: 'quoted', toSend: false });
    expect(json.byModel).toEqual({ Kokoro: { jobs: 8, total: 0.352 }, Ltxv_13B_0_9_8_Distilled_FP8: { jobs: 2, total: 0.079626 } });
    expect(json).toMatchObject({ budget: 10, spent: 0.05, withinBudget: true, priceCalls: 4, fitCount: 9, balanceCovers: false });
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
  });
});
