import { readFileSync } from 'node:fs';
import { parseBaseUrl } from '../api/base-url.js';
import type { Clock } from '../clock.js';
import { ConfigError } from '../errors.js';
import { openManifest, STDIN_MANIFEST } from '../manifest/open.js';
import { usdToMicro, type MicroUsd } from '../money.js';
import { createRunProgress, limitsOf, type PlanChoice } from '../runner/index.js';
import type { LockHolder } from '../store/index.js';
import * as ledgers from '../lib/ledger.js';
import { DEFAULT_BASE_URL, defaultPlan, parseBudget, parsePlan } from '../lib/options.js';
import { openService as connect, withWork } from '../lib/session.js';
import type { ServiceAddress, ServiceSession, Work } from '../lib/session.js';
import { optionLabel, type SharedArgs } from './options.js';
import { logLine } from './output.js';
import { startPricingTicker } from './progress.js';

/**
 * The service client for a command: against --base-url with the user's token, or against an
 * in-process simulator on a loopback port under --sim.
 */
export function openService(args: SharedArgs, env: NodeJS.ProcessEnv, clock?: Clock): Promise<ServiceSession> {
  return connect(serviceAddress(args, env), clock);
}

function serviceAddress(args: SharedArgs, env: NodeJS.ProcessEnv): ServiceAddress {
  return args.sim ? { sim: true } : { baseUrl: resolveBaseUrl(args, env), token: readToken(args, env) };
}

/** The base URL from --base-url, else MEDIABATCH_BASE_URL, else the service's, checked by parseBaseUrl. */
export function resolveBaseUrl(args: Pick<SharedArgs, 'base-url'>, env: NodeJS.ProcessEnv): string {
  const fromFlag = args['base-url'];
  const fromEnv = env['MEDIABATCH_BASE_URL'];
  if (fromFlag !== undefined) return parseBaseUrl(fromFlag, '--base-url').text;
  if (fromEnv !== undefined) return parseBaseUrl(fromEnv, 'MEDIABATCH_BASE_URL').text;
  return DEFAULT_BASE_URL;
}

/**
 * The token, from `--token-file` or MEDIABATCH_TOKEN only: a `--token` flag would show in `ps`
 * and in shell history. The value never goes into a message.
 */
function readToken(args: SharedArgs, env: NodeJS.ProcessEnv): string {
  const file = args['token-file'];
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new ConfigError(`--token-file ${file}: cannot read it (${code}); give a readable file holding the API token`, 'E_TOKEN');
    }
    const token = text.trim();
    if (token === '') throw new ConfigError(`--token-file ${file} is empty; put the API token in it`, 'E_TOKEN');
    if (/\s/.test(token)) throw new ConfigError(`--token-file ${file}: expected one token on one line`, 'E_TOKEN');
    return token;
  }
  const token = env['MEDIABATCH_TOKEN']?.trim();
  if (token === undefined || token === '') {
    throw new ConfigError(
      'no API token: set MEDIABATCH_TOKEN or pass --token-file PATH (or try --sim to use the built-in simulator)',
      'E_TOKEN',
    );
  }
  return token;
}

type WorkArgs = SharedArgs & {
  manifest: string;
  out?: string | undefined;
  budget?: string | undefined;
  plan?: string | undefined;
  'allow-outside-files': boolean;
};

/**
 * What estimate and run share: the manifest (exit 2 before anything else), the service, the
 * ledger, the plan and the budget, open while `work` runs (lib/session.ts), and the pricing
 * ticker until `work` stops it. An estimate that finds the ledger held by a run works on a copy
 * of it, and says so.
 */
export async function withWorkSession(
  args: WorkArgs,
  options: { command: string; run: boolean; clock: Clock },
  work: (session: WorkSession) => Promise<number>,
): Promise<number> {
  // The command line (and MEDIABATCH_* variables, filled in by the middleware) is checked first.
  const givenBudgetUsd = parseBudget(args.budget, optionLabel(args, 'budget'));
  const planName: PlanChoice = parsePlan(optionLabel(args, 'plan'), args.plan) ?? defaultPlan(args.sim);
  ledgers.requireNamesForStdin(args, options.run);
  const manifest = await openManifest(args.manifest, { allowOutsideFiles: args['allow-outside-files'], input: args.manifest === STDIN_MANIFEST ? process.stdin : undefined });
  // Flag, else MEDIABATCH_BUDGET, else the manifest's.
  const budgetUsd = givenBudgetUsd ?? manifest.budgetUsd ?? null;
  // A cap never grows by rounding: a budget typed with finer steps than a micro-dollar rounds down.
  const budgetMicro = budgetUsd === null ? null : usdToMicro(budgetUsd, 'down');
  const paths = ledgers.manifestPaths(args.manifest, args.db);
  const request = {
    ...options,
    manifest,
    manifestArg: args.manifest,
    db: args.db,
    out: args.out,
    address: () => serviceAddress(args, process.env),
    onCopy: (busy: LockHolder) => logLine(`mediabatch: ${ledgers.copyNote(paths.db, busy, options.command)}`),
  };
  return withWork(request, async (opened) => {
    const plan = { limits: limitsOf(planName), name: planName };
    const progress = createRunProgress();
    const ticker = startPricingTicker({ progress: progress.pricing, plan, print: logLine, clock: options.clock });
    try {
      return await work({ ...opened, planName, plan, budgetMicro, progress, ticker });
    } finally {
      ticker.stop();
    }
  });
}

type WorkSessionParts = { planName: PlanChoice; plan: { limits: ReturnType<typeof limitsOf>; name: PlanChoice } };
export type WorkSession = Work &
  WorkSessionParts & {
    budgetMicro: MicroUsd | null;
    progress: ReturnType<typeof createRunProgress>;
    ticker: ReturnType<typeof startPricingTicker>;
  };
