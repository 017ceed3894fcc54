import { ConfigError } from '../errors.js';
import type { JobType } from '../jobs/types.js';
import type { Manifest } from '../manifest/open.js';
import { budgetFit, decimalUsd, formatUsd, usdToMicro, withinBudget, type MicroUsd } from '../money.js';
import type { PricingResult } from '../pricing/price-jobs.js';
import type { ListingLedger, PlanLedger, SendSelection } from '../store/index.js';
import type { Completion } from './completion.js';
import type { RunDeps } from './context.js';
import { executePlan, type ExecuteResult } from './execute.js';
import { ingestManifest, type IngestResult } from './ingest.js';
import type { SplitJoins } from './join-splits.js';
import { planRun, type BudgetFitResult, type RunPlan } from './plan.js';
import { jobWindows } from './windows.js';
import { loadCatalogue, priceLedger, readBalanceUsd, type ServiceDeps } from './prepare.js';
import { BudgetError } from './run-errors.js';
import { checkSelection, type Selection } from './selection.js';

export interface RunInput {
  manifest: Manifest;
  deps: RunDeps;
  completion: Completion;
  joins: SplitJoins;
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
  const { manifest, deps } = input;
  const { ledger } = deps;
  for (const id of await ledger.recoverInterrupted()) {
    deps.emit({ kind: 'in_doubt', id, reason: 'a previous run stopped while submitting it' });
  }
  const service: ServiceDeps = { ...deps, baseUrl: input.baseUrl, retry: deps.options.retry };
  const ingest = await ingestManifest({
    manifest,
    onProgress: (rows) => {
      deps.progress.pricing.jobsRead = rows;
    },
    ledger,
    models: await loadCatalogue(service),
    onChanged: (change) =>
      deps.emit({
        kind: 'warning',
        message: `job "${change.id}" changed after it was submitted: it keeps its earlier result (${change.state}). Give it a new id to generate it again.`,
      }),
  });
  const send: SendSelection = { resubmitInDoubt: deps.options.resubmitInDoubt, ...input.select };
  await checkSelection(ledger, send);
  // Only what this run may send needs a price (and a fresh one): a finished job costs nothing more.
  const pricing = await priceLedger(send, service, { confirmCached: true });
  for (const change of pricing.changes) {
    deps.emit({
      kind: 'warning',
      message: `the service's price changed since it was cached (${change.model}: ${formatUsd(usdToMicro(change.cachedUsd, 'up'))} → ${formatUsd(usdToMicro(change.currentUsd, 'up'))} for one job): its group was priced again before anything was sent`,
    });
  }
  // Kept as exact decimal dollars, the key `status` has always read.
  if (deps.options.budgetMicro !== null) await ledger.setMeta('budget_usd', decimalUsd(deps.options.budgetMicro));
  const plan = await planFromLedger(ledger, send, deps.options.budgetMicro, input.partial);
  if (plan.budget.overByMicro > 0 && !input.partial) throw new BudgetError(budgetMessage(plan));
  await checkBalance(deps, plan.send.micro);
  await input.onExecute?.(plan);
  const execute = await executePlan(deps, input.completion, plan, send, { userStop: input.userStop, halt: input.halt });
  // Parts collected by earlier runs, or by one that stopped before joining them.
  await input.joins.sweep();
  return { plan, pricing, execute, ingest };
}

/** The plan from what the ledger counts: the jobs `send` selects, their prices, the spend. */
export async function planFromLedger(
  ledger: ListingLedger & PlanLedger,
  send: SendSelection,
  budgetMicro: MicroUsd | null,
  partial: boolean,
): Promise<RunPlan> {
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
async function checkBalance(deps: RunDeps, toSendMicro: MicroUsd): Promise<void> {
  if (toSendMicro === 0) return;
  const balanceUsd = await readBalanceUsd({ client: deps.client, retry: deps.options.retry, emit: deps.emit, stop: deps.stop });
  const balanceMicro = usdToMicro(balanceUsd, 'down');
  if (balanceMicro < toSendMicro) {
    throw new ConfigError(
      `the account balance ${formatUsd(balanceMicro)} cannot cover this run (${formatUsd(toSendMicro)} to send). Nothing was sent. Top up, or lower the batch with --budget and --partial.`,
      'E_BALANCE',
    );
  }
}

/**
 * What of the jobs `send` selects fits under the budget on top of what is spent, in manifest
 * order (money.ts's rule, the one the ledger's reservation applies too): the prices stream from
 * the ledger, so this costs a pass over the jobs but never holds them.
 */
export async function fitInOrder(
  ledger: Pick<ListingLedger, 'readJobs'>,
  send: SendSelection,
  spentMicro: MicroUsd,
  budgetMicro: MicroUsd,
): Promise<BudgetFitResult> {
  const fit = budgetFit(spentMicro, budgetMicro);
  const byType: BudgetFitResult['byType'] = {};
  let through: BudgetFitResult['through'];
  for await (const row of jobWindows(ledger, { scope: 'manifest', send })) {
    if (row.priceMicro === null) throw new Error(`bug in mediabatch: job "${row.id}" is to be sent but has no price`);
    if (!fit.take(row.priceMicro)) break;
    through = { index: row.manifestIndex, id: row.id };
    byType[row.type] = (byType[row.type] ?? 0) + 1;
  }
  return { count: fit.count, micro: fit.micro, byType, through };
}
