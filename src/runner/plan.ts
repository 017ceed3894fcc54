import type { ResolvedJob } from '../manifest/types.js';
import { fitCount, sumMicro, type MicroUsd } from '../money.js';
import type { JobView } from '../store/index.js';
import { followedFromView, type FollowedJob } from './followed.js';

/** What the plan needs to know of a ledger row: the ledger's own narrow read of it. */
export type LedgerView = JobView;

export type SubmitReason = 'new' | 'unskipped' | 'resubmit-in-doubt';

export interface PlannedSubmit {
  job: ResolvedJob;
  priceMicro: MicroUsd;
  reason: SubmitReason;
}

export interface BudgetCheck {
  budgetMicro: MicroUsd | null;
  /** What the ledger already counts as spent, earlier runs included. */
  spentMicro: MicroUsd;
  /** Price of everything the plan would send. */
  toSendMicro: MicroUsd;
  /** spent + toSend − budget when positive, else 0. */
  overByMicro: MicroUsd;
  /** How many of the jobs to send fit under the budget, taken in manifest order. */
  fitCount: number;
}

export interface RunPlan {
  /** In manifest order; already cut to the budget when `partial`. */
  submit: PlannedSubmit[];
  /** Left out by --partial because of the budget. */
  skip: PlannedSubmit[];
  /**
   * Submitted earlier: to be polled and downloaded. Every such row of the ledger, whether or not
   * the manifest still lists it: its result is paid for either way.
   */
  follow: { job: FollowedJob; requestId: string }[];
  inDoubt: ResolvedJob[];
  done: ResolvedJob[];
  failed: ResolvedJob[];
  budget: BudgetCheck;
}

export interface PlanInput {
  jobs: readonly ResolvedJob[];
  rows: ReadonlyMap<string, LedgerView>;
  prices: ReadonlyMap<string, MicroUsd>;
  spentMicro: MicroUsd;
  budgetMicro: MicroUsd | null;
  partial: boolean;
  resubmitInDoubt: boolean;
}

/**
 * Decides, from the manifest and the ledger alone, what this run does with each job. Pure: it
 * sends nothing and writes nothing, so `estimate`, `run` and the tests share one answer.
 * When the budget does not hold and `partial` is false, `submit` still lists everything and
 * `budget.overByMicro` is positive: the caller refuses to start.
 */
export function planRun(input: PlanInput): RunPlan {
  const plan: RunPlan = {
    submit: [],
    skip: [],
    follow: [],
    inDoubt: [],
    done: [],
    failed: [],
    budget: { budgetMicro: input.budgetMicro, spentMicro: input.spentMicro, toSendMicro: 0, overByMicro: 0, fitCount: 0 },
  };
  const candidates: PlannedSubmit[] = [];
  for (const job of input.jobs) {
    const row = input.rows.get(job.id);
    const reason = submitReason(row, input.resubmitInDoubt);
    if (reason !== undefined) {
      candidates.push({ job, priceMicro: priceOf(input.prices, job.id), reason });
      continue;
    }
    if (row === undefined) continue;
    if (row.state === 'in_doubt') plan.inDoubt.push(job);
    else if (row.state === 'done') plan.done.push(job);
    else if (row.state === 'failed') plan.failed.push(job);
  }
  for (const row of input.rows.values()) {
    if (row.state === 'submitted' && row.requestId !== null) plan.follow.push({ job: followedFromView(row), requestId: row.requestId });
  }
  plan.budget = checkBudget(candidates, input.spentMicro, input.budgetMicro);
  const cut = input.partial ? plan.budget.fitCount : candidates.length;
  plan.submit = candidates.slice(0, cut);
  plan.skip = candidates.slice(cut);
  return plan;
}

/** Whether a job in this ledger state may be sent by a run (and so needs a price). */
export function mayBeSent(row: LedgerView | undefined, resubmitInDoubt: boolean): boolean {
  return submitReason(row, resubmitInDoubt) !== undefined;
}

function submitReason(row: LedgerView | undefined, resubmitInDoubt: boolean): SubmitReason | undefined {
  if (row === undefined || row.state === 'pending') return 'new';
  if (row.state === 'skipped') return 'unskipped';
  if (row.state === 'in_doubt' && resubmitInDoubt) return 'resubmit-in-doubt';
  return undefined;
}

function priceOf(prices: ReadonlyMap<string, MicroUsd>, id: string): MicroUsd {
  const price = prices.get(id);
  // Pricing covers every job before planning; a gap here is a bug, not a user error.
  if (price === undefined) throw new Error(`no price for job ${id}`);
  return price;
}

/**
 * The budget rule (src/money.ts): spent + everything still to send must stay under the cap.
 * `fitCount` (what --partial sends) is the rule of src/money.ts, which the ledger's
 * reservation before each submit applies too.
 */
export function checkBudget(
  candidates: readonly { priceMicro: MicroUsd }[],
  spentMicro: MicroUsd,
  budgetMicro: MicroUsd | null,
): BudgetCheck {
  const prices = candidates.map((c) => c.priceMicro);
  const toSendMicro = sumMicro(prices);
  const fitting = fitCount(prices, spentMicro, budgetMicro);
  const overByMicro = budgetMicro === null ? 0 : Math.max(0, spentMicro + toSendMicro - budgetMicro);
  return { budgetMicro, spentMicro, toSendMicro, overByMicro, fitCount: fitting };
}
