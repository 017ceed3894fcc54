import { ConfigError } from '../errors.js';
import type { JobType } from '../jobs/types.js';
import type { Manifest } from '../manifest/types.js';
import { decimalUsd, formatUsd, usdToMicro, withinBudget, type MicroUsd } from '../money.js';
import type { PricingResult } from '../pricing/price-jobs.js';
import type { Ledger, SendSelection } from '../store/index.js';
import { fitInOrder } from './budget.js';
import type { RunContext } from './context.js';
import { executePlan, type ExecuteResult } from './execute.js';
import { ingestManifest, type IngestResult } from './ingest.js';
import { planRun, type RunPlan } from './plan.js';
import { loadCatalogue, priceLedger, readBalanceUsd, type ServiceDeps } from './prepare.js';
import { BudgetError } from './run-errors.js';
import { checkSelection, type Selection } from './selection.js';

export interface RunInput {
  manifest: Manifest;
  ctx: RunContext;
  baseUrl: string;
  partial: boolean;
  /** --only, --tag, --redo: checked against the manifest's jobs before anything is priced. */
  select: Selection;
  userStop: AbortSignal;
  halt: AbortController;
  /** Called once checks, pricing and the budget passed, and awaited before the first submit. */
  onExecute?: (plan: RunPlan) => Promise<void> | void;
}

export interface RunOutcome {
  plan: RunPlan;
  pricing: PricingResult;
  execute: ExecuteResult;
  ingest: IngestResult;
}

/**
 * `run` without the terminal: recover, check and record the manifest's jobs, price, plan, enforce
 * the budget, then execute. Nothing is sent before the budget and the balance have been checked
 * against the whole plan.
 */
export async function runManifest(input: RunInput): Promise<RunOutcome> {
  const { manifest, ctx } = input;
  const { ledger } = ctx;
  for (const id of await ledger.recoverInterrupted()) {
    ctx.emit({ kind: 'in_doubt', id, reason: 'a previous run stopped while submitting it' });
  }
  const deps: ServiceDeps = { ...ctx, baseUrl: input.baseUrl, retry: ctx.options.retry };
  const ingest = await ingestManifest({
    manifest,
    onProgress: (rows) => {
      ctx.progress.pricing.jobsRead = rows;
    },
    ledger,
    models: await loadCatalogue(deps),
    onChanged: (change) =>
      ctx.emit({
        kind: 'warning',
        message: `job "${change.id}" changed after it was submitted: it keeps its earlier result (${change.state}). Give it a new id to generate it again.`,
      }),
  });
  const send: SendSelection = { resubmitInDoubt: ctx.options.resubmitInDoubt, ...input.select };
  await checkSelection(ledger, send);
  // Only what this run may send needs a price (and a fresh one): a finished job costs nothing more.
  const pricing = await priceLedger(send, deps, { confirmCached: true });
  for (const change of pricing.changes) {
    ctx.emit({
      kind: 'warning',
      message: `the service's price changed since it was cached (${change.model}: ${formatUsd(usdToMicro(change.cachedUsd, 'up'))} → ${formatUsd(usdToMicro(change.currentUsd, 'up'))} for one job): its group was priced again before anything was sent`,
    });
  }
  // Kept as exact decimal dollars, the key `status` has always read.
  if (ctx.options.budgetMicro !== null) await ledger.setMeta('budget_usd', decimalUsd(ctx.options.budgetMicro));
  const plan = await planFromLedger(ledger, send, ctx.options.budgetMicro, input.partial);
  if (plan.budget.overByMicro > 0 && !input.partial) throw new BudgetError(budgetMessage(plan));
  await checkBalance(ctx, plan.send.micro);
  await input.onExecute?.(plan);
  const execute = await executePlan(ctx, plan, send, { userStop: input.userStop, halt: input.halt });
  // Parts collected by earlier runs, or by one that stopped before joining them.
  await ctx.joins.sweep();
  return { plan, pricing, execute, ingest };
}

/** The plan from what the ledger counts: the jobs `send` selects, their prices, the spend. */
export async function planFromLedger(ledger: Ledger, send: SendSelection, budgetMicro: MicroUsd | null, partial: boolean): Promise<RunPlan> {
  const lines = await ledger.costRows(send, 'to_send');
  const byType: Partial<Record<JobType, number>> = {};
  for (const line of lines) byType[line.type] = (byType[line.type] ?? 0) + line.jobs;
  const candidates = { jobs: lines.reduce((n, row) => n + row.jobs, 0), micro: lines.reduce((n, row) => n + row.priceMicro, 0), byType };
  const spentMicro = await ledger.spentMicro();
  const fits = budgetMicro === null || withinBudget(spentMicro, candidates.micro, budgetMicro);
  return planRun({
    candidates,
    counts: await ledger.countsByState('report'),
    spentMicro,
    budgetMicro,
    partial,
    fit: fits ? undefined : await fitInOrder(ledger, send, spentMicro, budgetMicro),
  });
}

export function budgetMessage(plan: RunPlan): string {
  const { budgetMicro, spentMicro, toSendMicro, overByMicro, fitCount } = plan.budget;
  return (
    `the budget of ${formatUsd(budgetMicro ?? 0)} would be exceeded by ${formatUsd(overByMicro)}: ` +
    `${formatUsd(spentMicro)} already spent + ${formatUsd(toSendMicro)} for ${plan.send.jobs + plan.skip} job(s) to send. ` +
    `${fitCount} of them fit in manifest order. Nothing was sent. Raise --budget, or add --partial to send those that fit.`
  );
}

/** Generation is refused below about $0.49 (docs/service.md); refuse up front rather than halfway. */
async function checkBalance(ctx: RunContext, toSendMicro: MicroUsd): Promise<void> {
  if (toSendMicro === 0) return;
  const balanceUsd = await readBalanceUsd({ client: ctx.client, retry: ctx.options.retry, emit: ctx.emit, stop: ctx.stop });
  const balanceMicro = usdToMicro(balanceUsd, 'down');
  if (balanceMicro < toSendMicro) {
    throw new ConfigError(
      `the account balance ${formatUsd(balanceMicro)} cannot cover this run (${formatUsd(toSendMicro)} to send). Nothing was sent. Top up, or lower the batch with --budget and --partial.`,
      'E_BALANCE',
    );
  }
}
