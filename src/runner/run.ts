import { ConfigError } from '../errors.js';
import type { JobType } from '../jobs/types.js';
import { budgetFit, decimalUsd, formatUsd, usdToMicro, withinBudget, type MicroUsd } from '../money.js';
import type { PricingResult } from '../pricing/price-jobs.js';
import type { SendableJob } from '../jobs/index.js';
import type { KeyPrice, ListingLedger, PlanLedger, SendSelection } from '../store/index.js';
import type { RunDeps } from './context.js';
import { executePlan, type ExecuteResult } from './execute.js';
import type { Downstream } from './downstream.js';
import type { Completion } from './follow.js';
import type { RunRequest } from './index.js';
import type { IngestResult } from './ingest.js';
import type { SplitJoins } from './join-splits.js';
import { planRun, type BudgetFitResult, type RunPlan } from './plan.js';
import { settleBlocked } from './graph.js';
import { jobPricer, prepareSend, readBalanceUsd, type ServiceDeps } from './prepare.js';
import { BudgetError } from './run-errors.js';
import { jobWindows } from './windows.js';

export interface RunOutcome {
  plan: RunPlan;
  pricing: PricingResult;
  execute: ExecuteResult;
  ingest: IngestResult;
}

/**
 * `run` once its dependencies are built: recover, check and record the manifest's jobs, price,
 * plan, enforce the budget, then execute. Nothing is sent before the budget and the balance have
 * been checked against the whole plan; `onExecute` is awaited before the first submit.
 */
export async function sendManifest(
  request: Pick<RunRequest, 'manifest' | 'service' | 'partial'>,
  deps: RunDeps,
  followed: { completion: Completion; joins: SplitJoins; downstream: Downstream },
  send: SendSelection,
  control: { userStop: AbortSignal; halt: AbortController; onExecute: (plan: RunPlan) => Promise<void> },
): Promise<RunOutcome> {
  const { ledger, options } = deps;
  for (const id of await ledger.recoverInterrupted()) {
    deps.emit({ kind: 'in_doubt', id, reason: 'a previous run stopped while submitting it' });
  }
  const service = { ...deps, baseUrl: request.service.baseUrl, retry: options.retry };
  const { ingest, pricing, models, graph } = await prepareSend(request.manifest, service, send, true);
  // Kept as exact decimal dollars, the key `status` has always read.
  if (options.budgetMicro !== null) await ledger.setMeta('budget_usd', decimalUsd(options.budgetMicro));
  const partial = request.partial ?? false;
  const plan = await planFromLedger(ledger, send, options.budgetMicro, partial);
  if (plan.budget.overByMicro > 0 && !partial) throw new BudgetError(budgetMessage(plan));
  await checkBalance(service, plan.send.micro);
  await control.onExecute(plan);
  let pricer: Promise<(job: SendableJob) => Promise<KeyPrice>> | undefined;
  const price = async (job: SendableJob): Promise<KeyPrice> => (await (pricer ??= jobPricer(service)))(job);
  const dependents = graph ? { ledger, outDir: options.outDir, models, price, emit: deps.emit } : undefined;
  const execute = await executePlan(deps, { ...followed, dependents }, plan, send, control);
  // Parts collected by earlier runs, or by one that stopped before joining them.
  await followed.joins.sweep();
  // What failed for good, or was left out, keeps its dependents from being sent: they say so.
  if (graph && execute.fatal === undefined) await settleBlocked(ledger, null, deps.emit);
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
async function checkBalance(deps: ServiceDeps, toSendMicro: MicroUsd): Promise<void> {
  if (toSendMicro === 0) return;
  const balanceUsd = await readBalanceUsd(deps);
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
