import os from 'node:os';
import type { Argv } from 'yargs';
import { existsSync } from 'node:fs';
import { ManifestError } from '../manifest/errors.js';
import { openManifest, STDIN_MANIFEST } from '../manifest/open.js';
import type { Manifest } from '../manifest/types.js';
import { usdToMicro, type MicroUsd } from '../money.js';
import type { PlanChoice } from '../runner/index.js';
import type { Ledger, LockHolder } from '../store/index.js';
import { check } from '../runner/index.js';
import { claimLedger, discardLedger, lockedOrCopy, openLedgerFor } from './ledger.js';
import { envHint, envOptions, optionLabel } from './env-options.js';
import { manifestPaths, parseBudget, requireNamesForStdin, parsePlan, PLAN_CHOICES, readToken, resolveBaseUrl, type ManifestFileArgs, type ManifestPaths, type SharedArgs } from './options.js';
import { logLine } from './output.js';
import { openService, type ServiceSession } from './service.js';
import type { Clock } from '../clock.js';

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
  /**
   * Closes the service and the ledger. Given the error that ended the command: a ledger this
   * session created for a manifest found invalid goes too (nothing was recorded in it).
   */
  close(error?: unknown): Promise<void>;
}

/**
 * What estimate and run share: the manifest (exit 2 before anything else), the service, the
 * ledger, the plan and the budget. For a run (`run: true`) the ledger is locked, so a second
 * run of the same manifest refuses instead of sending the same jobs. An estimate takes the lock
 * too, or, while a run holds it, works on a copy (lockedOrCopy): a run's job list never changes
 * under it.
 */
export async function openWorkSession(
  args: SharedArgs & PlanArgs & ManifestFileArgs & { manifest: string; out?: string | undefined },
  options: { command: string; run: boolean; clock: Clock },
): Promise<WorkSession> {
  // The command line (and MEDIABATCH_* variables, filled in by the middleware) is checked first.
  const givenBudgetUsd = parseBudget(args.budget, optionLabel(args, 'budget'));
  const planName: PlanChoice = parsePlan(optionLabel(args, 'plan'), args.plan) ?? (args.sim ? 'unlimited' : 'premium');
  requireNamesForStdin(args, options.run);
  const manifest = await openManifest(args.manifest, { allowOutsideFiles: args['allow-outside-files'], input: args.manifest === STDIN_MANIFEST ? process.stdin : undefined });
  const paths = manifestPaths(args.manifest, args.db, args.out);
  // Flag, else MEDIABATCH_BUDGET, else the manifest's.
  const budgetUsd = givenBudgetUsd ?? manifest.budgetUsd ?? null;
  // A cap never grows by rounding: a budget typed with finer steps than a micro-dollar rounds down.
  const budgetMicro = budgetUsd === null ? null : usdToMicro(budgetUsd, 'down');
  // Token and base URL first: a configuration error must not leave an empty ledger behind.
  if (!args.sim) {
    try {
      resolveBaseUrl(args, process.env);
      readToken(args, process.env);
    } catch (error) {
      // A manifest wrong as written is the first thing to fix (exit 2): it is checked offline
      // before the missing token or bad base URL is reported.
      await check({ manifest });
      throw error;
    }
  }
  const created = !existsSync(paths.db);
  const opened = await openLedgerFor(paths.db, 'read-write', options.clock);
  let ledger = opened;
  try {
    await claimLedger(opened, paths.manifest);
    const holder = { pid: process.pid, host: os.hostname(), command: options.command };
    if (options.run) await opened.acquireRunLock(holder);
    else ledger = await lockedOrCopy(opened, holder, (busy) => logLine(copyNote(paths.db, busy, options.command)));
    const service = await openService(args, process.env, options.clock);
    return {
      manifest,
      paths,
      service,
      ledger,
      planName,
      budgetMicro,
      close: async (error?: unknown) => {
        await service.close();
        // Releases the run lock once every change asked for is committed.
        await ledger.close();
        if (created && error instanceof ManifestError) await discardLedger(paths.db);
      },
    };
  } catch (error) {
    await ledger.close();
    await opened.close();
    throw error;
  }
}

function copyNote(file: string, busy: LockHolder, command: string): string {
  return `mediabatch: the ledger ${file} is in use by mediabatch pid ${busy.pid} on ${busy.host} (${busy.command}): this ${command} works on a copy of it taken now and leaves the ledger itself untouched`;
}
