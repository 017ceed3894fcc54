import { describe, expect, it } from 'vitest';
import { planLimits } from '../../src/jobs/plans.js';
import { buildCostReport, type CostReport, type CostReportJob } from '../../src/pricing/report.js';
import { estimateMarkdown, formatCostReport } from '../../src/report/cost-report.js';
import { estimateCsvChunks, groupsCsvChunks } from '../../src/report/csv.js';
import { estimateJsonChunks } from '../../src/report/documents.js';
import { addToSteps, newStepFigures } from '../../src/report/steps.js';
import { textOf } from '../helpers/chunks.js';
import { expectDocument } from '../helpers/documents.js';
import { costInput, laws, memoryCache, priceJobs, quoteWith, speechJob, speechQuoter, videoJob, videoQuoter } from '../pricing/jobs.js';

async function sampleReport(budgetMicro: number | null) {
  const jobs = [
    ...Array.from({ length: 8 }, (_, i) => speechJob(`line-${i}`, 1000 + i * 500, {}, i)),
    videoJob('waves', {}, 8),
    videoJob('dunes', {}, 9),
  ];
  const speech = speechQuoter(laws.roundedUp4);
  const video = videoQuoter();
  const pricing = await priceJobs(jobs, { quote: quoteWith(speech, video), cache: memoryCache() });
  const price = (id: string) => pricing.prices.get(id) ?? { priceMicro: 0, source: 'quoted' as const };
  const done = new Set(['line-0']);
  const report = await buildCostReport({
    ...costInput(jobs, (job) => price(job.id), {
      spentMicro: 50_000,
      alreadyDoneIds: done,
      budgetMicro,
      balanceMicro: 200_000,
      plan: planLimits('basic'),
      planName: 'basic',
      concurrency: 8,
    }),
    pricing,
  });
  // The jobs as the ledger lists them, in manifest order.
  const rows: CostReportJob[] = jobs.map((job) => ({
    id: job.id,
    type: job.type,
    model: String(job.params['model']),
    priceMicro: price(job.id).priceMicro,
    source: price(job.id).source,
    toSend: !done.has(job.id),
  }));
  return Object.assign(report, { rows }) as CostReport & { rows: CostReportJob[] };
}

describe('formatCostReport', () => {
  it('renders tables, money lines, over-budget advice and pace', async () => {
    const report = await sampleReport(300_000);
    expect(formatCostReport(report, { color: false, firstJobs: report.rows.slice(0, 4) })).toMatchInlineSnapshot(`
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
    expect(formatCostReport(report, { color: false, firstJobs: report.rows })).not.toContain('\u001b[');
    expect(formatCostReport(report, { color: true, firstJobs: report.rows })).toContain('\u001b[1m');
  });
});

describe('the estimate document', () => {
  it("has the contract's fields first, in its order, snake_case, with the 0.1 names as aliases", async () => {
    const report = await sampleReport(10_000_000);
    const text = await textOf(estimateJsonChunks(report, report.rows));
    const json = JSON.parse(text) as Record<string, unknown> & { jobs: Record<string, unknown>[]; by_model: unknown };
    expect(Object.keys(json).slice(0, 8)).toEqual(['schema_version', 'total', 'spent', 'budget', 'within_budget', 'price_calls', 'jobs', 'by_model']);
    expect(json.jobs[0]).toEqual({ id: 'line-0', type: 'txt2audio', model: 'Kokoro', price: 0.016, price_source: 'quoted', to_send: false, priceSource: 'quoted' });
    expect(json.by_model).toEqual({ Kokoro: { jobs: 8, total: 0.352 }, Ltxv_13B_0_9_8_Distilled_FP8: { jobs: 2, total: 0.079626 } });
    expect(json).toMatchObject({ schema_version: 1, budget: 10, spent: 0.05, within_budget: true, price_calls: 4, fit_count: 9, balance_covers: false });
    expect(json).toMatchObject({ withinBudget: json['within_budget'], priceCalls: json['price_calls'], byModel: json.by_model });
    // One job a line between the head and the totals.
    expect(text.split('\n').filter((line) => line.startsWith('    {"id":'))).toHaveLength(10);
  });

  it('is the same document whether the rows come as an array or as an async iterable', async () => {
    const report = await sampleReport(null);
    async function* fromLedger() {
      for (const job of report.rows) yield job;
    }
    expect(await textOf(estimateJsonChunks(report, fromLedger()))).toBe(await textOf(estimateJsonChunks(report, report.rows)));
    const empty = JSON.parse(await textOf(estimateJsonChunks(report, []))) as { jobs: unknown[]; total: number };
    expect(empty.jobs).toEqual([]);
  });
});

describe('the estimate CSV files and markdown', () => {
  it('one job a row, and one price group a row with voice, characters, price source and total', async () => {
    const report = await sampleReport(300_000);
    const jobs = (await textOf(estimateCsvChunks(report.rows))).split('\n');
    expect(jobs.slice(0, 3)).toEqual([
      'id,type,model,price_usd,price_source,to_send',
      'line-0,txt2audio,Kokoro,0.016,quoted,no',
      'line-1,txt2audio,Kokoro,0.024,derived,yes',
    ]);
    expect(await textOf(groupsCsvChunks(report.byGroup))).toBe(
      'type,model,voice,parameters,characters,jobs,price_source,jobs_quoted,jobs_derived,jobs_cached,price_calls,total_usd\n' +
        'txt2audio,Kokoro,af_sky,lang=en-us speed=1 format=mp3 sample_rate=24000,22000,8,quoted+derived,3,5,0,3,0.352\n' +
        'img2video,Ltxv_13B_0_9_8_Distilled_FP8,,width=768 height=432 steps=1 frames=120 fps=30,,2,quoted,2,0,0,1,0.079626\n',
    );
  });

  it('markdown for a ticket: money exact to the micro-dollar, breakdowns, budget and balance', async () => {
    expect(estimateMarkdown(await sampleReport(300_000), 'show.yaml')).toMatchInlineSnapshot(`
      "# Cost estimate: show.yaml

      10 jobs, basic plan. **Over budget.**

      ## Money

      |  | amount |
      | --- | ---: |
      | Total (whole manifest) | $0.431626 |
      | Already spent (ledger) | $0.05 |
      | To spend (9 jobs) | $0.415626 |
      | Budget | $0.30 |
      | Left after the run | -$0.165626 |
      | Over budget by | $0.165626 |
      | Fits with --partial (5 jobs) | $0.20 |
      | Balance | $0.20 |
      | Balance covers what is to spend | no |

      ## By type

      | type | jobs | total |
      | --- | ---: | ---: |
      | txt2audio | 8 | $0.352 |
      | img2video | 2 | $0.079626 |

      ## By model

      | model | jobs | total |
      | --- | ---: | ---: |
      | Kokoro | 8 | $0.352 |
      | Ltxv_13B_0_9_8_Distilled_FP8 | 2 | $0.079626 |

      ## By price group

      | type | model | voice | parameters | characters | jobs | price source | calls | total |
      | --- | --- | --- | --- | ---: | ---: | --- | ---: | ---: |
      | txt2audio | Kokoro | af_sky | lang=en-us speed=1 format=mp3 sample_rate=24000 | 22,000 | 8 | quoted+derived | 3 | $0.352 |
      | img2video | Ltxv_13B_0_9_8_Distilled_FP8 |  | width=768 height=432 steps=1 frames=120 fps=30 |  | 2 | quoted | 1 | $0.079626 |

      ## Pace

      - Price calls: 4 (prices: 5 quoted, 5 derived, 0 cached)
      - Duration at the basic plan's pace: about 2 minutes (Basic: img2video 1/min)
      "
    `);
  });
});

describe('a manifest whose jobs take others\' results', () => {
  /** The sample as a pipeline: the two videos take a speech line's result, one priced at its bound. */
  async function pipelineReport() {
    const report = await sampleReport(null);
    const rows = report.rows.map((job) =>
      job.type === 'txt2audio' ? { ...job, step: 1, upperBound: false } : { ...job, step: 2, upperBound: job.id === 'waves' });
    const steps = newStepFigures();
    for (const job of rows) addToSteps(steps, { step: job.step, state: 'pending', priceMicro: job.priceMicro, upperBound: job.upperBound });
    return { ...report, rows, steps };
  }

  it('groups the text report by step and marks a price at an upper bound, said once', async () => {
    const report = await pipelineReport();
    const text = formatCostReport(report, { color: false, firstJobs: report.rows });
    expect(text).toMatch(/\n {2}waves +img2video +\S+ +≤ \$[\d.]+ +quoted\n/);
    expect(text).toMatch(/\n {2}dunes +img2video +\S+ +\$[\d.]+ +quoted\n/);
    expect(text).toMatch(/\nBy step\n {2}step {2}jobs +total\n {2}1 +8 +\$[\d.]+\n {2}2 +2 +\$[\d.]+\n\nBy type\n/);
    expect(text.split('≤ 1 job(s) are priced at the catalogue\'s upper bound')).toHaveLength(2);
    expect(text).toContain(
      '  ≤ 1 job(s) are priced at the catalogue\'s upper bound: their price depends on an input not made yet.\n' +
        '  The budget reserves the bound; a run prices each for real before sending it and releases the rest.\n',
    );
    const markdown = estimateMarkdown(report, 'show.yaml');
    expect(markdown).toContain('## By step\n\n| step | jobs | total |\n| --- | ---: | ---: |\n| 1 | 8 |');
    expect(markdown).toContain('\n\n≤ 1 job(s) are priced at the catalogue\'s upper bound');
  });

  it('puts by_step, the bounds counted and each job\'s step and bound in the document and the CSV', async () => {
    const report = await pipelineReport();
    const json = expectDocument<{ by_step: unknown; includes_upper_bounds: number; jobs: Record<string, unknown>[] }>(
      'estimate',
      await textOf(estimateJsonChunks(report, report.rows)),
    );
    const [speech, video] = [report.steps.byStep.get(1)!, report.steps.byStep.get(2)!];
    expect(json.by_step).toEqual({
      1: { jobs: 8, total: speech.totalMicro / 1e6 },
      2: { jobs: 2, total: video.totalMicro / 1e6 },
    });
    expect(json.includes_upper_bounds).toBe(1);
    expect(json.jobs[8]).toMatchObject({ id: 'waves', step: 2, upper_bound: true });
    expect(json.jobs[0]).toMatchObject({ id: 'line-0', step: 1, upper_bound: false });
    const csv = (await textOf(estimateCsvChunks(report.rows, true))).split('\n');
    expect(csv[0]).toBe('id,type,model,price_usd,price_source,to_send,step,upper_bound');
    expect(csv[9]).toMatch(/^waves,img2video,.*,2,yes$/);
  });

  it('leaves a manifest without inputs as it was: no step, no bound', async () => {
    const report = await sampleReport(null);
    const text = await textOf(estimateJsonChunks({ ...report, steps: undefined }, report.rows));
    expect(text).not.toMatch(/"step"|by_step|upper_bound/);
    expect(formatCostReport(report, { color: false, firstJobs: report.rows })).not.toMatch(/step|≤/);
  });
});
