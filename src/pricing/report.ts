import type { JobType } from '../jobs/types.js';
import type { PlanLimits } from '../jobs/plans.js';
import type { ResolvedJob } from '../manifest/types.js';
import { estimateDuration, type DurationEstimate } from './duration.js';
import { fitCount, sumMicro, withinBudget, type MicroUsd } from '../money.js';
import type { GroupSummary, PriceSource, PricingResult } from './types.js';

export interface CostReportJob {
  id: string;
  type: JobType;
  model: string;
  priceMicro: MicroUsd;
  source: PriceSource;
  /** False for jobs the ledger already paid for: they are not sent again and not in `toSpendMicro`. */
  toSend: boolean;
}

export interface CostTotals {
  jobs: number;
  totalMicro: MicroUsd;
}

export interface CostReport {
  /** In manifest order. */
  jobs: CostReportJob[];
  byType: Record<string, CostTotals>;
  byModel: Record<string, CostTotals>;
  byGroup: GroupSummary[];
  /** The whole manifest, sent or not. */
  totalMicro: MicroUsd;
  jobsToSend: number;
  toSpendMicro: MicroUsd;
  /** From the ledger: earlier runs. */
  spentMicro: MicroUsd;
  budgetMicro: MicroUsd | null;
  /** budget − spent − toSpend; negative when over; null without a budget. */
  leftMicro: MicroUsd | null;
  withinBudget: boolean;
  overByMicro: MicroUsd;
  /** How many of the jobs to send fit under the budget, taken in manifest order (--partial). */
  fitCount: number;
  fitMicro: MicroUsd;
  balanceMicro: MicroUsd | null;
  /** Null when the balance is unknown. */
  balanceCovers: boolean | null;
  priceCalls: number;
  /** Age of the oldest cached price the report rests on; null when every price is fresh. */
  cachedPriceAgeMs: number | null;
  planName: string;
  concurrency: number;
  duration: DurationEstimate;
  durationText: string;
}

export interface CostReportInput {
  jobs: readonly ResolvedJob[];
  pricing: PricingResult;
  spentMicro: MicroUsd;
  alreadyDoneIds?: ReadonlySet<string>;
  budgetMicro: MicroUsd | null;
  balanceMicro?: MicroUsd | undefined;
  plan: PlanLimits;
  planName: string;
  concurrency: number;
}

/** The cost report of `estimate` and of a run's start. Pure arithmetic over prices already found. */
export function buildCostReport(input: CostReportInput): CostReport {
  const jobs = input.jobs.map((job) => reportJob(job, input));
  const sending = jobs.filter((job) => job.toSend);
  const toSpendMicro = sumMicro(sending.map((job) => job.priceMicro));
  const budget = budgetFigures(sending, input.spentMicro, toSpendMicro, input.budgetMicro);
  const duration = estimateDuration(countByType(sending), input.plan, input.planName);
  const balanceMicro = input.balanceMicro ?? null;
  return {
    jobs,
    byType: totalsBy(jobs, (job) => job.type),
    byModel: totalsBy(jobs, (job) => job.model),
    byGroup: input.pricing.groups,
    totalMicro: sumMicro(jobs.map((job) => job.priceMicro)),
    jobsToSend: sending.length,
    toSpendMicro,
    spentMicro: input.spentMicro,
    budgetMicro: input.budgetMicro,
    ...budget,
    balanceMicro,
    balanceCovers: balanceMicro === null ? null : balanceMicro >= toSpendMicro,
    priceCalls: input.pricing.priceCalls,
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

function reportJob(job: ResolvedJob, input: CostReportInput): CostReportJob {
  const price = input.pricing.prices.get(job.id);
  // priceJobs prices every job it is given; a gap means the caller passed other jobs: a bug.
  if (price === undefined) throw new Error(`the cost report has no price for job ${job.id}`);
  return {
    id: job.id,
    type: job.type,
    model: String(job.params['model']),
    priceMicro: price.priceMicro,
    source: price.source,
    toSend: !(input.alreadyDoneIds?.has(job.id) ?? false),
  };
}

type BudgetFigures = Pick<CostReport, 'leftMicro' | 'withinBudget' | 'overByMicro' | 'fitCount' | 'fitMicro'>;

/** The budget caps the ledger's whole spend, earlier runs included: money.ts's one rule. */
function budgetFigures(sending: readonly CostReportJob[], spent: MicroUsd, toSpend: MicroUsd, budget: MicroUsd | null): BudgetFigures {
  const prices = sending.map((job) => job.priceMicro);
  const fitting = fitCount(prices, spent, budget);
  const fitMicro = sumMicro(prices.slice(0, fitting));
  if (budget === null) return { leftMicro: null, withinBudget: true, overByMicro: 0, fitCount: fitting, fitMicro };
  const within = withinBudget(spent, toSpend, budget);
  return { leftMicro: budget - spent - toSpend, withinBudget: within, overByMicro: within ? 0 : spent + toSpend - budget, fitCount: fitting, fitMicro };
}

function totalsBy(jobs: readonly CostReportJob[], keyOf: (job: CostReportJob) => string): Record<string, CostTotals> {
  const totals: Record<string, CostTotals> = {};
  for (const job of jobs) {
    const entry = (totals[keyOf(job)] ??= { jobs: 0, totalMicro: 0 });
    entry.jobs += 1;
    entry.totalMicro += job.priceMicro;
  }
  return totals;
}

function countByType(jobs: readonly CostReportJob[]): Partial<Record<JobType, number>> {
  const counts: Partial<Record<JobType, number>> = {};
  for (const job of jobs) counts[job.type] = (counts[job.type] ?? 0) + 1;
  return counts;
}
