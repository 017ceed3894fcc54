import os from 'node:os';
import type { Argv } from 'yargs';
import { loadManifestIsolated } from '../manifest/load-isolated.js';
import type { Manifest } from '../manifest/types.js';
import { usdToMicro, type MicroUsd } from '../money.js';
import type { PlanChoice } from '../runner/index.js';
import type { Ledger } from '../store/index.js';
import { claimLedger, openLedgerFor } from './ledger.js';
import { envHint, envOptions, optionLabel } from './env-options.js';
import { manifestPaths, parseBudget, parsePlan, PLAN_CHOICES, readToken, resolveBaseUrl, type ManifestFileArgs, type ManifestPaths, type SharedArgs } from './options.js';
import { openService, type ServiceSession } from './service.js';

export type { PlanChoice };

export interface PlanArgs {
  /** As typed (flag or MEDIABATCH_PLAN): parsed by parsePlan. */
  plan?: string | undefined;
  /** As typed (flag or MEDIABATCH_BUDGET): parsed by parseBudget. */
  budget?: string | undefined;
}

export function withPlanOptions<T>(argv: Argv<T>): Argv<T & PlanArgs> {
  return argv
    .option('budget', {
      type: 'string',
      describe: `cap on the whole spend for this manifest, in USD (${envHint('budget')}; overrides the manifest)`,
    })
    .option('plan', {
      type: 'string',
      describe: `pace requests for this account plan: ${PLAN_CHOICES.join(', ')} (${envHint('plan')}; default premium, unlimited under --sim)`,
    })
    .middleware(envOptions(['budget', 'plan'], process.env)) as Argv<T & PlanArgs>;
}

export interface WorkSession {
  manifest: Manifest;
  paths: ManifestPaths;
  service: ServiceSession;
  ledger: Ledger;
  planName: PlanChoice;
  budgetMicro: MicroUsd | null;
  close(): Promise<void>;
}

/**
 * What estimate and run share: the manifest (exit 2 before anything else), the service, the
 * ledger, the plan and the budget. For a run (`run: true`) the ledger is opened in 'run' mode
 * (its state changes commit on a writer thread) and locked, so a second run of the same
 * manifest refuses instead of sending the same jobs.
 */
export async function openWorkSession(
  args: SharedArgs & PlanArgs & ManifestFileArgs & { manifest: string; out?: string | undefined },
  options: { command: string; run: boolean },
): Promise<WorkSession> {
  // The command line (and MEDIABATCH_* variables, filled in by the middleware) is checked first.
  const givenBudgetUsd = parseBudget(args.budget, optionLabel(args, 'budget'));
  const planName: PlanChoice = parsePlan(optionLabel(args, 'plan'), args.plan) ?? (args.sim ? 'unlimited' : 'premium');
  const manifest = await loadManifestIsolated(args.manifest, { allowOutsideFiles: args['allow-outside-files'] });
  const paths = manifestPaths(args.manifest, args.db, args.out);
  // Flag, else MEDIABATCH_BUDGET, else the manifest's.
  const budgetUsd = givenBudgetUsd ?? manifest.budgetUsd ?? null;
  // A cap never grows by rounding: a budget typed with finer steps than a micro-dollar rounds down.
  const budgetMicro = budgetUsd === null ? null : usdToMicro(budgetUsd, 'down');
  // Token and base URL first: a configuration error must not leave an empty ledger behind.
  if (!args.sim) {
    resolveBaseUrl(args, process.env);
    readToken(args, process.env);
  }
  const ledger = await openLedgerFor(paths.db, options.run ? 'run' : 'read-write');
  try {
    await claimLedger(ledger, paths.manifest);
    if (options.run) await ledger.acquireRunLock({ pid: process.pid, host: os.hostname(), command: options.command });
    const service = await openService(args, process.env);
    return {
      manifest,
      paths,
      service,
      ledger,
      planName,
      budgetMicro,
      close: async () => {
        await service.close();
        // Releases the run lock once every change asked for is committed.
        await ledger.close();
      },
    };
  } catch (error) {
    await ledger.close();
    throw error;
  }
}
