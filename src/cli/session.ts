import os from 'node:os';
import type { Argv } from 'yargs';
import { planLimits, unlimitedPlan, type PlanLimits } from '../jobs/plans.js';
import { loadManifest } from '../manifest/load.js';
import type { Manifest } from '../manifest/types.js';
import { Pace, planPace } from '../runner/pace.js';
import type { Ledger } from '../store/index.js';
import { claimLedger, openLedgerFor } from './ledger.js';
import { manifestPaths, parseBudget, readToken, resolveBaseUrl, type ManifestFileArgs, type ManifestPaths, type SharedArgs } from './options.js';
import { openService, type ServiceSession } from './service.js';

export type PlanChoice = 'basic' | 'premium' | 'unlimited';

export interface PlanArgs {
  plan?: PlanChoice | undefined;
  /** As typed: parsed by parseBudget. */
  budget?: string | undefined;
}

export function withPlanOptions<T>(argv: Argv<T>): Argv<T & PlanArgs> {
  return argv
    .option('budget', { type: 'string', describe: 'cap on the whole spend for this manifest, in USD (overrides the manifest)' })
    .option('plan', {
      choices: ['basic', 'premium', 'unlimited'] as const,
      describe: 'pace requests for this account plan (default premium; unlimited under --sim)',
    }) as Argv<T & PlanArgs>;
}

export interface WorkSession {
  manifest: Manifest;
  paths: ManifestPaths;
  service: ServiceSession;
  ledger: Ledger;
  planName: PlanChoice;
  planLimits: PlanLimits;
  budgetUsd: number | null;
  close(): Promise<void>;
}

/**
 * What estimate and run share: the manifest (exit 2 before anything else), the service, the
 * ledger (locked for a run, so a second run of the same manifest refuses instead of sending
 * the same jobs), the plan and the budget.
 */
export async function openWorkSession(
  args: SharedArgs & PlanArgs & ManifestFileArgs & { manifest: string; out?: string | undefined },
  options: { lock: boolean; command: string },
): Promise<WorkSession> {
  const manifest = await loadManifest(args.manifest, { allowOutsideFiles: args['allow-outside-files'] });
  const paths = manifestPaths(args.manifest, args.db, args.out);
  const budgetUsd = parseBudget(args.budget) ?? manifest.budgetUsd ?? null;
  const planName: PlanChoice = args.plan ?? (args.sim ? 'unlimited' : 'premium');
  // Token and base URL first: a configuration error must not leave an empty ledger behind.
  if (!args.sim) {
    resolveBaseUrl(args, process.env);
    readToken(args, process.env);
  }
  const ledger = openLedgerFor(paths.db);
  let locked = false;
  try {
    claimLedger(ledger, paths.manifest);
    if (options.lock) {
      ledger.acquireRunLock({ pid: process.pid, host: os.hostname(), command: options.command });
      locked = true;
    }
    const service = await openService(args, process.env);
    return {
      manifest,
      paths,
      service,
      ledger,
      planName,
      planLimits: planName === 'unlimited' ? unlimitedPlan() : planLimits(planName),
      budgetUsd,
      close: async () => {
        await service.close();
        if (locked) ledger.releaseRunLock();
        ledger.close();
      },
    };
  } catch (error) {
    if (locked) ledger.releaseRunLock();
    ledger.close();
    throw error;
  }
}

export function paceFor(session: WorkSession, onPause?: (cls: string, untilMs: number, reason: string) => void): Pace {
  if (session.planName === 'unlimited') return new Pace({}, { onPause });
  return new Pace(planPace(session.planLimits), { onPause });
}
