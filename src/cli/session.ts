import os from 'node:os';
import { existsSync } from 'node:fs';
import { ManifestError } from '../manifest/errors.js';
import { openManifest, STDIN_MANIFEST } from '../manifest/open.js';
import { usdToMicro } from '../money.js';
import type { PlanChoice } from '../runner/index.js';
import type { LockHolder } from '../store/index.js';
import { check } from '../runner/index.js';
import * as ledgers from './ledger.js';
import * as flags from './options.js';
import { logLine } from './output.js';
import { openService, readToken, resolveBaseUrl } from './service.js';
import type { Clock } from '../clock.js';

/**
 * What estimate and run share: the manifest (exit 2 before anything else), the service, the
 * ledger, the plan and the budget. For a run (`run: true`) the ledger is locked, so a second
 * run of the same manifest refuses instead of sending the same jobs. An estimate takes the lock
 * too, or, while a run holds it, works on a copy (lockedOrCopy): a run's job list never changes
 * under it.
 */
export async function openWorkSession(
  args: flags.SharedArgs & flags.PlanArgs & flags.ManifestFileArgs & { manifest: string; out?: string | undefined },
  options: { command: string; run: boolean; clock: Clock },
) {
  // The command line (and MEDIABATCH_* variables, filled in by the middleware) is checked first.
  const givenBudgetUsd = flags.parseBudget(args.budget, flags.optionLabel(args, 'budget'));
  const planName: PlanChoice = flags.parsePlan(flags.optionLabel(args, 'plan'), args.plan) ?? (args.sim ? 'unlimited' : 'premium');
  ledgers.requireNamesForStdin(args, options.run);
  const manifest = await openManifest(args.manifest, { allowOutsideFiles: args['allow-outside-files'], input: args.manifest === STDIN_MANIFEST ? process.stdin : undefined });
  const paths = ledgers.manifestPaths(args.manifest, args.db, args.out);
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
  const opened = await ledgers.openLedgerFor(paths.db, 'read-write', options.clock);
  let ledger = opened;
  try {
    await ledgers.claimLedger(opened, paths.manifest);
    const holder = { pid: process.pid, host: os.hostname(), command: options.command };
    if (options.run) await opened.acquireRunLock(holder);
    else ledger = await ledgers.lockedOrCopy(opened, holder, (busy) => logLine(copyNote(paths.db, busy, options.command)));
    const service = await openService(args, process.env, options.clock);
    return {
      manifest,
      paths,
      service,
      ledger,
      planName,
      budgetMicro,
      /**
       * Closes the service and the ledger. Given the error that ended the command: a ledger this
       * session created for a manifest found invalid goes too (nothing was recorded in it).
       */
      close: async (error?: unknown) => {
        await service.close();
        // Releases the run lock once every change asked for is committed.
        await ledger.close();
        if (created && error instanceof ManifestError) await ledgers.discardLedger(paths.db);
      },
    };
  } catch (error) {
    await ledger.close();
    await opened.close();
    throw error;
  }
}

export type WorkSession = Awaited<ReturnType<typeof openWorkSession>>;

function copyNote(file: string, busy: LockHolder, command: string): string {
  return `mediabatch: the ledger ${file} is in use by mediabatch pid ${busy.pid} on ${busy.host} (${busy.command}): this ${command} works on a copy of it taken now and leaves the ledger itself untouched`;
}
