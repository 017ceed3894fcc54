import type { JobType } from '../jobs/types.js';
import type { PlanLimits } from '../jobs/plans.js';
import type { ResolvedJob } from '../manifest/types.js';
import { estimateDuration, type DurationEstimate } from './duration.js';
import { fitCount } from './budget.js';
import { cleanUsd, EPSILON_USD, sumUsd } from './money.js';
import type { GroupSummary, PriceSource, PricingResult } from './types.js';

export interface CostReportJob {
  id: string;
  type: JobType;
  model: string;
  priceUsd: number;
  source: PriceSource;
  /** False for jobs the ledger already paid for: they are not sent again and not in `toSpendUsd`. */
  toSend: boolean;
}

export interface CostTotals {
  jobs: number;
  totalUsd: number;
}

export interface CostReport {
  /** In manifest order. */
  jobs: CostReportJob[];
  byType: Record<string, CostTotals>;
  byModel: Record<string, CostTotals>;
  byGroup: GroupSummary[];
  /** The whole manifest, sent or not. */
  totalUsd: number;
  jobsToSend: number;
  toSpendUsd: number;
  /** From the ledger: earlier runs. */
  spentUsd: number;
  budgetUsd: number | null;
  /** budget − spent − toSpend; negative when over; null without a budget. */
  leftUsd: number | null;
  withinBudget: boolean;
  overByUsd: number;
  /** How many of the jobs to send fit under the budget, taken in manifest order (--partial). */
  fitCount: number;
  fitUsd: number;
  balanceUsd: number | null;
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
  spentUsd: number;
  alreadyDoneIds?: ReadonlySet<string>;
  budgetUsd: number | null;
  balanceUsd?: number | undefined;
  plan: PlanLimits;
  planName: string;
  concurrency: number;
}

/** The cost report of `estimate` and of a run's start. Pure arithmetic over prices already found. */
export function buildCostReport(input: CostReportInput): CostReport {
  const jobs = input.jobs.map((job) => reportJob(job, input));
  const sending = jobs.filter((job) => job.toSend);
  const toSpendUsd = sumUsd(sending.map((job) => job.priceUsd));
  const budget = budgetFigures(sending, input.spentUsd, toSpendUsd, input.budgetUsd);
  const duration = estimateDuration(countByType(sending), input.plan, input.planName);
  const balanceUsd = input.balanceUsd ?? null;
  return {
    jobs,
    byType: totalsBy(jobs, (job) => job.type),
    byModel: totalsBy(jobs, (job) => job.model),
    byGroup: input.pricing.groups,
    totalUsd: sumUsd(jobs.map((job) => job.priceUsd)),
    jobsToSend: sending.length,
    toSpendUsd,
    spentUsd: input.spentUsd,
    budgetUsd: input.budgetUsd,
    ...budget,
    balanceUsd,
    balanceCovers: balanceUsd === null ? null : balanceUsd + EPSILON_USD >= toSpendUsd,
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
    priceUsd: price.priceUsd,
    source: price.source,
    toSend: !(input.alreadyDoneIds?.has(job.id) ?? false),
  };
}

type BudgetFigures = Pick<CostReport, 'leftUsd' | 'withinBudget' | 'overByUsd' | 'fitCount' | 'fitUsd'>;

/** The budget caps the ledger's whole spend, earlier runs included; `fitCount` is budget.ts's rule. */
function budgetFigures(
  sending: readonly CostReportJob[],
  spentUsd: number,
  toSpendUsd: number,
  budgetUsd: number | null,
): BudgetFigures {
  if (budgetUsd === null) {
    return { leftUsd: null, withinBudget: true, overByUsd: 0, fitCount: sending.length, fitUsd: toSpendUsd };
  }
  const fitting = fitCount(sending.map((job) => job.priceUsd), spentUsd, budgetUsd);
  const leftUsd = cleanUsd(budgetUsd - spentUsd - toSpendUsd);
  const overByUsd = leftUsd < -EPSILON_USD ? -leftUsd : 0;
  return {
    leftUsd,
    withinBudget: overByUsd === 0,
    overByUsd,
    fitCount: fitting,
    fitUsd: sumUsd(sending.slice(0, fitting).map((job) => job.priceUsd)),
  };
}

function totalsBy(jobs: readonly CostReportJob[], keyOf: (job: CostReportJob) => string): Record<string, CostTotals> {
  const prices = new Map<string, number[]>();
  for (const job of jobs) {
    const key = keyOf(job);
    const list = prices.get(key);
    if (list === undefined) prices.set(key, [job.priceUsd]);
    else list.push(job.priceUsd);
  }
  return Object.fromEntries([...prices].map(([key, list]) => [key, { jobs: list.length, totalUsd: sumUsd(list) }]));
}

function countByType(jobs: readonly CostReportJob[]): Partial<Record<JobType, number>> {
  const counts: Partial<Record<JobType, number>> = {};
  for (const job of jobs) counts[job.type] = (counts[job.type] ?? 0) + 1;
  return counts;
}
