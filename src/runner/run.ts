import { ConfigError } from '../errors.js';
import type { Manifest, ResolvedJob } from '../manifest/types.js';
import type { PricingResult } from '../pricing/price-jobs.js';
import type { JobView, Ledger } from '../store/index.js';
import type { RunContext } from './context.js';
import { executePlan, type ExecuteResult } from './execute.js';
import { planRun, sumUsd, type RunPlan } from './plan.js';
import { checkWithService, priceManifest, type ServiceDeps } from './prepare.js';
import { BudgetError } from './run-errors.js';
import { formatUsd } from '../report/money.js';

export interface RunInput {
  manifest: Manifest;
  ctx: RunContext;
  baseUrl: string;
  partial: boolean;
  userStop: AbortSignal;
  halt: AbortController;
  /** Called once checks, pricing and the budget passed, and awaited before the first submit. */
  onExecute?: (plan: RunPlan) => Promise<void> | void;
}

export interface RunOutcome {
  plan: RunPlan;
  pricing: PricingResult;
  execute: ExecuteResult;
  changedIds: string[];
}

/**
 * `run` without the terminal: recover, check, price, plan, enforce the budget, then execute.
 * Nothing is sent before the budget and the balance have been checked against the whole plan.
 */
export async function runManifest(input: RunInput): Promise<RunOutcome> {
  const { manifest, ctx } = input;
  const { ledger } = ctx;
  for (const id of ledger.recoverInterrupted()) {
    ctx.emit({ kind: 'in_doubt', id, reason: 'a previous run stopped while submitting it' });
  }
  const deps: ServiceDeps = { ...ctx, baseUrl: input.baseUrl, retry: ctx.options.retry };
  await checkWithService(manifest, deps);
  const changedIds = syncLedger(ledger, manifest.jobs, ctx);
  const pricing = await priceManifest(manifest, deps, { confirmCached: true });
  for (const change of pricing.changes) {
    ctx.emit({
      kind: 'warning',
      message: `the service's price changed since it was cached (${change.model}: ${formatUsd(change.cachedUsd)} → ${formatUsd(change.currentUsd)} for one job): its group was priced again before anything was sent`,
    });
  }
  const views = ledger.jobViews();
  storePrices(ledger, pricing, views);
  if (ctx.options.budgetUsd !== null) ledger.setMeta('budget_usd', String(ctx.options.budgetUsd));

  const plan = planRun({
    jobs: manifest.jobs,
    rows: new Map(views.map((view) => [view.id, view])),
    prices: new Map([...pricing.prices].map(([id, p]) => [id, p.priceUsd])),
    spentUsd: ledger.spentUsd(),
    budgetUsd: ctx.options.budgetUsd,
    partial: input.partial,
    resubmitInDoubt: ctx.options.resubmitInDoubt,
  });
  if (plan.budget.overByUsd > 0 && !input.partial) throw new BudgetError(budgetMessage(plan));
  await checkBalance(ctx, sumUsd(plan.submit.map((s) => s.priceUsd)));
  await input.onExecute?.(plan);
  const execute = await executePlan(ctx, plan, { userStop: input.userStop, halt: input.halt });
  return { plan, pricing, execute, changedIds };
}

function syncLedger(ledger: Ledger, jobs: readonly ResolvedJob[], ctx: RunContext): string[] {
  const { changed } = ledger.syncJobs(
    jobs.map((job) => ({
      id: job.id,
      index: job.index,
      contentHash: job.contentHash,
      type: job.type,
      paramsJson: JSON.stringify(job.params),
      textChars: job.textChars,
    })),
  );
  for (const change of changed) {
    ctx.emit({
      kind: 'warning',
      message: `job "${change.id}" changed after it was submitted: it keeps its earlier result (${change.state}). Give it a new id to generate it again.`,
    });
  }
  return changed.map((c) => c.id);
}

/** Prices are stored on rows not yet sent; a row already paid keeps the price it was sent at. */
function storePrices(ledger: Ledger, pricing: PricingResult, views: readonly JobView[]): void {
  const unsent = new Set(views.filter((v) => v.state === 'pending' || v.state === 'skipped' || v.state === 'in_doubt').map((v) => v.id));
  ledger.setPrices(
    [...pricing.prices]
      .filter(([id]) => unsent.has(id))
      .map(([id, p]) => ({ id, priceUsd: p.priceUsd, source: p.source, priceKey: p.key })),
  );
}

export function budgetMessage(plan: RunPlan): string {
  const { budgetUsd, spentUsd, toSendUsd, overByUsd, fitCount } = plan.budget;
  return (
    `the budget of ${formatUsd(budgetUsd ?? 0)} would be exceeded by ${formatUsd(overByUsd)}: ` +
    `${formatUsd(spentUsd)} already spent + ${formatUsd(toSendUsd)} for ${plan.submit.length + plan.skip.length} job(s) to send. ` +
    `${fitCount} of them fit in manifest order. Nothing was sent. Raise --budget, or add --partial to send those that fit.`
  );
}

/** API.md: generation is refused below about $0.49; refuse up front rather than halfway. */
async function checkBalance(ctx: RunContext, toSendUsd: number): Promise<void> {
  if (toSendUsd === 0) return;
  const { balanceUsd } = await ctx.client.balance({ signal: ctx.stop });
  if (balanceUsd < toSendUsd) {
    throw new ConfigError(
      `the account balance ${formatUsd(balanceUsd)} cannot cover this run (${formatUsd(toSendUsd)} to send). Nothing was sent. Top up, or lower the batch with --budget and --partial.`,
      'E_BALANCE',
    );
  }
}
