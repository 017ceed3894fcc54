import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { parseBaseUrl } from '../api/base-url.js';
import type { ServiceClient } from '../api/types.js';
import type { Clock } from '../clock.js';
import { ConfigError } from '../errors.js';
import { ManifestError } from '../manifest/errors.js';
import { openManifest, STDIN_MANIFEST } from '../manifest/open.js';
import { usdToMicro } from '../money.js';
import { check, createRunProgress, limitsOf, type PlanChoice } from '../runner/index.js';
import type { Simulator } from '../sim/index.js';
import type { LockHolder } from '../store/index.js';
import * as ledgers from '../lib/ledger.js';
import { DEFAULT_BASE_URL, defaultPlan, parseBudget, parsePlan } from '../lib/options.js';
import { optionLabel, type SharedArgs } from './options.js';
import { logLine } from './output.js';
import { startPricingTicker } from './progress.js';

export interface ServiceSession {
  client: ServiceClient;
  baseUrl: string;
  /** Set under --sim: the in-process simulator the client talks to. */
  simulator?: Simulator | undefined;
  close(): Promise<void>;
}

/**
 * Builds the service client for a command: against --base-url with the user's token, or against
 * an in-process simulator on a loopback port under --sim. The token goes to the client only.
 * The client (undici) and the simulator load only here, with the command that uses them.
 */
export async function openService(args: SharedArgs, env: NodeJS.ProcessEnv, clock?: Clock): Promise<ServiceSession> {
  const { createServiceClient } = await import('../api/client.js');
  if (args.sim) {
    const { startSimulator } = await import('../sim/index.js');
    const simulator = await startSimulator({ port: 0, clock });
    const client = createServiceClient({ baseUrl: simulator.url, token: simulator.token, clock });
    return {
      client,
      baseUrl: simulator.url,
      simulator,
      close: async () => {
        await client.close();
        await simulator.close();
      },
    };
  }
  const baseUrl = resolveBaseUrl(args, env);
  const client = createServiceClient({ baseUrl, token: readToken(args, env), clock });
  return { client, baseUrl, close: () => client.close() };
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
 * ledger, the plan and the budget, open while `work` runs, and the pricing ticker until `work`
 * stops it. For a run (`run: true`) the ledger is locked, so a second run of the same manifest
 * refuses instead of sending the same jobs. An estimate takes the lock too, or, while a run holds
 * it, works on a copy (lockedOrCopy): a run's job list never changes under it.
 */
export async function withWorkSession(
  args: WorkArgs,
  options: { command: string; run: boolean; clock: Clock },
  work: (session: WorkSession) => Promise<number>,
): Promise<number> {
  const session = await openWorkSession(args, options);
  let failure: unknown;
  try {
    return await work(session);
  } catch (error) {
    failure = error;
    throw error;
  } finally {
    session.ticker.stop();
    await session.close(failure);
  }
}

async function openWorkSession(args: WorkArgs, options: { command: string; run: boolean; clock: Clock }) {
  // The command line (and MEDIABATCH_* variables, filled in by the middleware) is checked first.
  const givenBudgetUsd = parseBudget(args.budget, optionLabel(args, 'budget'));
  const planName: PlanChoice = parsePlan(optionLabel(args, 'plan'), args.plan) ?? defaultPlan(args.sim);
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
    const plan = { limits: limitsOf(planName), name: planName };
    const progress = createRunProgress();
    const ticker = startPricingTicker({ progress: progress.pricing, plan, print: logLine, clock: options.clock });
    return {
      manifest,
      paths,
      service,
      ledger,
      planName,
      plan,
      budgetMicro,
      progress,
      ticker,
      /** Given the error that ended the command: a ledger created for a manifest found invalid goes too. */
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
