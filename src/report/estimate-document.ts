import { microToUsd } from '../money.js';
import type { CostReport, CostReportJob, CostTotals } from '../pricing/report.js';
import { SCHEMA_VERSION, type EstimateDocument, type EstimateJobJson } from './document-schemas.js';
import { jsonListDocument, type Rows } from './json-stream.js';

/**
 * `estimate --json` and `<name>.estimate.json` as text chunks: the contract's fields first, in
 * its order (schema_version, total, spent, budget, within_budget, price_calls), then one job a
 * line, then the totals. `rows` are the report's jobs (read from the ledger in windows).
 */
export function estimateJsonChunks(report: CostReport, rows: Rows<CostReportJob>): AsyncGenerator<string> {
  return jsonListDocument(estimateDocument(report), rows, estimateJobJson);
}

export function estimateJobJson(job: CostReportJob): EstimateJobJson {
  return {
    id: job.id,
    type: job.type,
    model: job.model,
    price: microToUsd(job.priceMicro),
    price_source: job.source,
    to_send: job.toSend,
    priceSource: job.source,
  };
}

/** The document with its jobs left to the rows; the 0.1 camelCase aliases last. */
function estimateDocument(report: CostReport): EstimateDocument {
  const byModel = totalsJson(report.byModel);
  return {
    schema_version: SCHEMA_VERSION,
    total: microToUsd(report.totalMicro),
    spent: microToUsd(report.spentMicro),
    budget: report.budgetMicro === null ? null : microToUsd(report.budgetMicro),
    within_budget: report.withinBudget,
    price_calls: report.priceCalls,
    jobs: [],
    by_model: byModel,
    by_type: totalsJson(report.byType),
    groups: report.byGroup.map((g) => ({
      key: g.key,
      type: g.type,
      model: g.model,
      params: { ...g.params },
      jobs: g.jobs,
      characters: g.characters,
      distinct_lengths: g.distinctLengths,
      method: g.method,
      calls: g.calls,
      total: microToUsd(g.totalMicro),
      jobs_by_source: { ...g.jobsBySource },
    })),
    to_spend: microToUsd(report.toSpendMicro),
    jobs_to_send: report.jobsToSend,
    left: report.leftMicro === null ? null : microToUsd(report.leftMicro),
    over_by: microToUsd(report.overByMicro),
    fit_count: report.fitCount,
    fit_total: microToUsd(report.fitMicro),
    balance: report.balanceMicro === null ? null : microToUsd(report.balanceMicro),
    balance_covers: report.balanceCovers,
    plan: report.planName,
    cached_price_age_s: report.cachedPriceAgeMs === null ? null : Math.round(report.cachedPriceAgeMs / 1000),
    duration: {
      ms: Math.round(report.duration.durationMs),
      text: report.durationText,
      status_polls_min: report.duration.statusPollsMin,
      status_per_day: report.duration.statusPerDay ?? null,
      with_webhooks: {
        ms: Math.round(report.duration.withWebhooks.durationMs),
        text: report.duration.withWebhooks.text,
        status_calls_min: report.duration.withWebhooks.statusCallsMin,
      },
      by_class: report.duration.byClass.map((c) => ({ what: c.what, requests: c.requests, ms: Math.round(c.durationMs), limit: c.limitText })),
    },
    withinBudget: report.withinBudget,
    priceCalls: report.priceCalls,
    byModel,
  };
}

function totalsJson(totals: Record<string, CostTotals>): EstimateDocument['by_type'] {
  return Object.fromEntries(Object.entries(totals).map(([name, t]) => [name, { jobs: t.jobs, total: microToUsd(t.totalMicro) }]));
}
