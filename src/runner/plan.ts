import type { JobState } from '../jobs/states.js';
import type { JobType } from '../jobs/types.js';
import { overBudgetBy, type MicroUsd } from '../money.js';
import type { JobCursor } from '../store/index.js';

export interface BudgetCheck {
  budgetMicro: MicroUsd | null;
  spentMicro: MicroUsd;
  toSendMicro: MicroUsd;
  /** spent + toSend − budget when positive, else 0. */
  overByMicro: MicroUsd;
  /** How many of the jobs to send fit under the budget, taken in manifest order. */
  fitCount: number;
}

export type ByType = Partial<Record<JobType, number>>;

/** What fits under the budget in manifest order (fitInOrder): asked for only when not everything does. */
export interface BudgetFitResult {
  count: number;
  micro: MicroUsd;
  byType: ByType;
  /** The last job that fits; undefined when none does. */
  through: JobCursor | undefined;
}

export interface RunPlan {
  /** Jobs this run sends, in manifest order, and what they cost; cut to the budget when `partial`. */
  send: { jobs: number; micro: MicroUsd; byType: ByType; through?: JobCursor | undefined; all: boolean };
  /** Jobs left out by --partial because of the budget. */
  skip: number;
  /** Jobs by state over the manifest and every outstanding job it dropped (what the run covers). */
  counts: Record<JobState, number>;
  budget: BudgetCheck;
}

export interface PlanInput {
  candidates: { jobs: number; micro: MicroUsd; byType: ByType };
  counts: Record<JobState, number>;
  spentMicro: MicroUsd;
  budgetMicro: MicroUsd | null;
  partial: boolean;
  fit: BudgetFitResult | undefined;
}

/**
 * Decides what this run sends, from what the ledger counts. Pure: it sends nothing and writes
 * nothing, so `estimate`, `run` and the tests share one answer. When the budget does not hold and
 * `partial` is false, `send` still covers everything and `budget.overByMicro` is positive: the
 * caller refuses to start.
 */
export function planRun(input: PlanInput): RunPlan {
  const { candidates, spentMicro, budgetMicro } = input;
  const overByMicro = overBudgetBy(spentMicro, candidates.micro, budgetMicro);
  const fitCount = overByMicro > 0 ? (input.fit?.count ?? 0) : candidates.jobs;
  const budget: BudgetCheck = { budgetMicro, spentMicro, toSendMicro: candidates.micro, overByMicro, fitCount };
  if (overByMicro === 0 || !input.partial) {
    return { send: { jobs: candidates.jobs, micro: candidates.micro, byType: candidates.byType, all: true }, skip: 0, counts: input.counts, budget };
  }
  const fit = input.fit ?? { count: 0, micro: 0, byType: {}, through: undefined };
  return {
    send: { jobs: fit.count, micro: fit.micro, byType: fit.byType, through: fit.through, all: false },
    skip: candidates.jobs - fit.count,
    counts: input.counts,
    budget,
  };
}
