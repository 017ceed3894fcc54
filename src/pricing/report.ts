import type { JobType } from '../jobs/types.js';
import type { PlanLimits } from '../jobs/plans.js';
import { estimateDuration } from './duration.js';
import { overBudgetBy, sumMicro, withinBudget, type MicroUsd } from '../money.js';
import type { GroupSummary, PriceSource, PricingResult } from './types.js';

/** One job of the cost report, as the per-job lines, JSON and CSV show it (read from the ledger a window at a time). */
export interface CostReportJob {
  id: string;
  type: JobType;
  model: string;
  priceMicro: MicroUsd;
  source: PriceSource;
  /** False for jobs the ledger already paid for (or finished): not sent again, not in `toSpendMicro`. */
  toSend: boolean;
  /** In a manifest whose jobs take others' results: its step, and whether it is priced at an upper bound. */
  step?: number | undefined;
  upperBound?: boolean | undefined;
}

export interface CostTotals {
  jobs: number;
  totalMicro: MicroUsd;
}

/** The cost report of `estimate` and of a run's start (money in µUSD; null: no budget, balance unknown). */
export type CostReport = Awaited<ReturnType<typeof buildCostReport>>;

/** The manifest's jobs by kind, model, price group and source, as the ledger sums them. */
export interface CostLine {
  type: JobType;
  model: string | null;
  groupKey: string | null;
  toSend: boolean;
  jobs: number;
  priceMicro: MicroUsd;
}

export interface CostReportInput {
  lines: readonly CostLine[];
  pricing: Pick<PricingResult, 'groups' | 'priceCalls'>;
  spentMicro: MicroUsd;
  budgetMicro: MicroUsd | null;
  /**
   * How many of the jobs to send fit under the budget in manifest order, and what they cost
   * (money.ts's fitCount over the ledger's prices): asked for only when they do not all fit.
   */
  fit: (budgetMicro: MicroUsd) => Promise<{ count: number; micro: MicroUsd }>;
  balanceMicro?: MicroUsd | undefined;
  plan: PlanLimits;
  planName: string;
  concurrency: number;
}

/** Arithmetic over what the ledger sums up; the budget caps the ledger's whole spend, earlier runs included. */
export async function buildCostReport(input: CostReportInput) {
  const sending = input.lines.filter((line) => line.toSend);
  const toSpendMicro = sumMicro(sending.map((line) => line.priceMicro));
  const jobsToSend = sumMicro(sending.map((line) => line.jobs));
  const budget = await budgetFigures(input, jobsToSend, toSpendMicro);
  const byType = Object.entries(totalsBy(sending, (line) => line.type));
  const jobsByType = byType.map(([type, totals]) => [type, totals.jobs]);
  const duration = estimateDuration(Object.fromEntries(jobsByType), input.plan, input.planName);
  const balanceMicro = input.balanceMicro ?? null;
  return {
    /** Jobs the manifest lists. */
    jobs: sumMicro(input.lines.map((line) => line.jobs)),
    byType: totalsBy(input.lines, (line) => line.type),
    byModel: totalsBy(input.lines, (line) => line.model ?? '?'),
    byGroup: input.pricing.groups,
    /** The whole manifest, sent or not. */
    totalMicro: sumMicro(input.lines.map((line) => line.priceMicro)),
    jobsToSend,
    toSpendMicro,
    /** From the ledger: earlier runs. */
    spentMicro: input.spentMicro,
    budgetMicro: input.budgetMicro,
    ...budget,
    balanceMicro,
    balanceCovers: balanceMicro === null ? null : balanceMicro >= toSpendMicro,
    priceCalls: input.pricing.priceCalls,
    /** Age of the oldest cached price the report rests on; null when every price is fresh. */
    cachedPriceAgeMs: oldestCachedAgeMs(input.pricing.groups),
    planName: input.planName,
    concurrency: input.concurrency,
    duration,
    durationText: duration.text,
  };
}

function oldestCachedAgeMs(groups: readonly GroupSummary[]): number | null {
  const ages = groups.map((group) => group.cachedAgeMs).filter((age): age is number => age !== null);
  return ages.length === 0 ? null : Math.max(...ages);
}

/**
 * money.ts's one rule. `leftMicro`: budget − spent − toSpend, negative when over; `fitCount`: how
 * many of the jobs to send fit under the budget, taken in manifest order (--partial).
 */
async function budgetFigures(input: CostReportInput, jobsToSend: number, toSpend: MicroUsd) {
  const { spentMicro: spent, budgetMicro: budget } = input;
  const allFit = { withinBudget: true, overByMicro: 0, fitCount: jobsToSend, fitMicro: toSpend };
  if (budget === null) return { leftMicro: null, ...allFit };
  const leftMicro = budget - spent - toSpend;
  if (withinBudget(spent, toSpend, budget)) return { leftMicro, ...allFit };
  const fit = await input.fit(budget);
  const overByMicro = overBudgetBy(spent, toSpend, budget);
  return { leftMicro, withinBudget: false, overByMicro, fitCount: fit.count, fitMicro: fit.micro };
}

function totalsBy(lines: readonly CostLine[], keyOf: (line: CostLine) => string): Record<string, CostTotals> {
  const totals: Record<string, CostTotals> = {};
  for (const line of lines) {
    const entry = (totals[keyOf(line)] ??= { jobs: 0, totalMicro: 0 });
    entry.jobs += line.jobs;
    entry.totalMicro += line.priceMicro;
  }
  return totals;
}
