import { PRICEABLE_STATES } from '../jobs/states.js';
import { ConfigError } from '../errors.js';
import type { Manifest, ResolvedJob } from '../manifest/types.js';
import type { PricingResult } from '../pricing/price-jobs.js';
import type { JobView, Ledger } from '../store/index.js';
import type { RunContext } from './context.js';
import { executePlan, type ExecuteResult } from './execute.js';
import { mayBeSent, planRun, type RunPlan } from './plan.js';
import { checkWithService, priceManifest, type ServiceDeps } from './prepare.js';
import { BudgetError } from './run-errors.js';
import { decimalUsd, formatUsd, sumMicro, usdToMicro, type MicroUsd } from '../money.js';

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
  for (const id of await ledger.recoverInterrupted()) {
    ctx.emit({ kind: 'in_doubt', id, reason: 'a previous run stopped while submitting it' });
  }
  const deps: ServiceDeps = { ...ctx, baseUrl: input.baseUrl, retry: ctx.options.retry };
  await checkWithService(manifest, deps);
  const changedIds = await syncLedger(ledger, manifest.jobs, ctx);
  const views = await ledger.jobViews();
  const rows = new Map(views.map((view) => [view.id, view]));
  // Only what this run may send needs a price (and a fresh one): a finished job costs nothing more.
  const unsent = manifest.jobs.filter((job) => mayBeSent(rows.get(job.id), ctx.options.resubmitInDoubt));
  const pricing = await priceManifest({ ...manifest, jobs: unsent }, deps, { confirmCached: true });
  for (const change of pricing.changes) {
    ctx.emit({
      kind: 'warning',
      message: `the service's price changed since it was cached (${change.model}: ${formatUsd(usdToMicro(change.cachedUsd, 'up'))} → ${formatUsd(usdToMicro(change.currentUsd, 'up'))} for one job): its group was priced again before anything was sent`,
    });
  }
  const prices = pricesMicro(pricing);
  await storePrices(ledger, pricing, views);
  // Kept as exact decimal dollars, the key `status` has always read.
  if (ctx.options.budgetMicro !== null) await ledger.setMeta('budget_usd', decimalUsd(ctx.options.budgetMicro));

  const plan = planRun({
    jobs: manifest.jobs,
    rows,
    prices,
    spentMicro: await ledger.spentMicro(),
    budgetMicro: ctx.options.budgetMicro,
    partial: input.partial,
    resubmitInDoubt: ctx.options.resubmitInDoubt,
  });
  if (plan.budget.overByMicro > 0 && !input.partial) throw new BudgetError(budgetMessage(plan));
  await checkBalance(ctx, sumMicro(plan.submit.map((s) => s.priceMicro)));
  await input.onExecute?.(plan);
  const execute = await executePlan(ctx, plan, { userStop: input.userStop, halt: input.halt });
  return { plan, pricing, execute, changedIds };
}

/** Every job's price as the ledger and the budget count it. */
export function pricesMicro(pricing: PricingResult): Map<string, MicroUsd> {
  return new Map([...pricing.prices].map(([id, p]) => [id, p.priceMicro]));
}

async function syncLedger(ledger: Ledger, jobs: readonly ResolvedJob[], ctx: RunContext): Promise<string[]> {
  const { changed } = await ledger.syncJobs(
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
async function storePrices(ledger: Ledger, pricing: PricingResult, views: readonly JobView[]): Promise<void> {
  const unsent = new Set(views.filter((v) => PRICEABLE_STATES.has(v.state)).map((v) => v.id));
  await ledger.setPrices(
    [...pricing.prices]
      .filter(([id]) => unsent.has(id))
      .map(([id, p]) => ({ id, priceMicro: p.priceMicro, source: p.source, priceKey: p.key })),
  );
}

export function budgetMessage(plan: RunPlan): string {
  const { budgetMicro, spentMicro, toSendMicro, overByMicro, fitCount } = plan.budget;
  return (
    `the budget of ${formatUsd(budgetMicro ?? 0)} would be exceeded by ${formatUsd(overByMicro)}: ` +
    `${formatUsd(spentMicro)} already spent + ${formatUsd(toSendMicro)} for ${plan.submit.length + plan.skip.length} job(s) to send. ` +
    `${fitCount} of them fit in manifest order. Nothing was sent. Raise --budget, or add --partial to send those that fit.`
  );
}

/** Generation is refused below about $0.49 (docs/service.md); refuse up front rather than halfway. */
async function checkBalance(ctx: RunContext, toSendMicro: MicroUsd): Promise<void> {
  if (toSendMicro === 0) return;
  const { balanceUsd } = await ctx.client.balance({ signal: ctx.stop });
  const balanceMicro = usdToMicro(balanceUsd, 'down');
  if (balanceMicro < toSendMicro) {
    throw new ConfigError(
      `the account balance ${formatUsd(balanceMicro)} cannot cover this run (${formatUsd(toSendMicro)} to send). Nothing was sent. Top up, or lower the batch with --budget and --partial.`,
      'E_BALANCE',
    );
  }
}
