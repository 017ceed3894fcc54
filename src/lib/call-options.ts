/**
 * The library's options, named as the CLI's flags and checked by the same rules (lib/options.ts),
 * each passed explicitly: nothing is read from the environment or the command line.
 */
import { parseBaseUrl } from '../api/base-url.js';
import { ConfigError, UsageError } from '../errors.js';
import { usdToMicro } from '../money.js';
import type { PlanChoice, RunEvent } from '../runner/index.js';
import type { ManifestInput } from './manifest-input.js';
import { BOUNDS, DEFAULT_BASE_URL, DEFAULT_LISTEN, defaultPlan, parseBudget, parseListen } from './options.js';
import { parseNumber, parsePlan, parseSelection, parseWebhookUrl, runNumbers } from './options.js';
import type { ServiceAddress } from './session.js';

export interface ServiceOptions {
  /** Default https://api.deapi.ai. */
  baseUrl?: string | undefined;
  /** The API token, needed unless `sim`; it goes to the HTTP client only. */
  token?: string | undefined;
  /** Start the built-in simulator on a free loopback port and use it: no token, no network. */
  sim?: boolean | undefined;
  /** The ledger file. Default `<name>.mediabatch.db` beside the manifest file; needed for a manifest value or jobs. */
  db?: string | undefined;
  /** Let `text_file` and media paths point outside the manifest's folder (only for a manifest you trust). */
  allowOutsideFiles?: boolean | undefined;
}

export interface ValidateOptions extends ServiceOptions {
  /** Check only what needs no service (also when neither `token` nor `sim` is given). */
  offline?: boolean | undefined;
}

export interface EstimateOptions extends ServiceOptions {
  /** USD: a cap on the whole spend for this manifest, earlier runs included. Default the manifest's, else none. */
  budget?: number | undefined;
  /** The account's plan, whose pace requests keep. Default 'premium'; 'unlimited' under `sim`. */
  plan?: PlanChoice | undefined;
  /** Submits in flight at once (1 to 64). Default 8. */
  concurrency?: number | undefined;
  /** Only jobs whose id matches one of these ids or globs (`"ch-0*"`). */
  only?: string[] | undefined;
  /** Only jobs carrying one of these tags. */
  tag?: string[] | undefined;
  /** Generate these done or failed jobs again, on purpose (priced and budgeted). */
  redo?: string[] | undefined;
  /** Stops the work as SIGTERM stops the CLI: nothing more is sent, what was sent is recorded. */
  signal?: AbortSignal | undefined;
  /** Each event as it happens; a callback that throws stops the work, which then rejects with its error. */
  onEvent?: ((event: RunEvent) => void) | undefined;
}

export interface RunOptions extends EstimateOptions {
  /** The results folder. Default `<name>.out/` beside the manifest file; needed for a manifest value or jobs. */
  out?: string | undefined;
  /** Over budget: send what fits, in manifest order, and skip the rest. */
  partial?: boolean | undefined;
  /** Send in-doubt jobs again (they may be paid twice). */
  resubmitInDoubt?: boolean | undefined;
  /** Stop after submitting; a later run follows and collects. */
  noWait?: boolean | undefined;
  /** Resend jobs that failed at the service, retryable and refunded, up to this many more times (0 to 20). */
  retries?: number | undefined;
  /** Follow jobs by the service's signed webhooks, posted to this public https:// URL and forwarded to `listen`. */
  webhookUrl?: string | undefined;
  /** Where the webhook receiver listens, `HOST:PORT`. Default 127.0.0.1:8787. */
  listen?: string | undefined;
  /** First status poll after this many milliseconds, backing off to 6×. Default the service's pace. */
  pollMs?: number | undefined;
  /** Results larger than this many megabytes are left for a later run. */
  maxResultMb?: number | undefined;
}

/** The simulator under `sim`, else the base URL (checked) with the token, which is required. */
export function serviceAddress(options: ServiceOptions): ServiceAddress {
  if (options.sim === true) return { sim: true };
  const baseUrl = parseBaseUrl(options.baseUrl ?? DEFAULT_BASE_URL, 'baseUrl').text;
  const token = options.token?.trim();
  if (token === undefined || token === '') {
    const message = 'no API token: give the token option (or sim: true to use the built-in simulator)';
    throw new ConfigError(message, 'E_TOKEN');
  }
  return { baseUrl, token };
}

/** A manifest given as a value or as jobs has no file to name its ledger (and a run's results) after. */
export function requireNames(input: ManifestInput, options: RunOptions, run: boolean): void {
  if (typeof input === 'string' || (options.db !== undefined && (!run || options.out !== undefined))) return;
  const names = run ? 'the db and out options' : 'the db option';
  const why = 'there is no manifest file to name them after';
  throw new UsageError(`a manifest given as a value or as jobs needs ${names}: ${why}`);
}

/** What an estimate and a run take from the options, checked before anything is opened. */
export function estimateSettings(options: EstimateOptions) {
  const budgetUsd = parseBudget(options.budget, 'budget');
  return {
    // A cap never grows by rounding: a budget finer than a micro-dollar rounds down. Undefined: the manifest's.
    budgetMicro: budgetUsd === undefined ? undefined : usdToMicro(budgetUsd, 'down'),
    plan: parsePlan('plan', options.plan) ?? defaultPlan(options.sim === true),
    concurrency: parseNumber('concurrency', options.concurrency, BOUNDS.concurrency),
    select: parseSelection({ only: options.only, tag: options.tag, redo: options.redo }, (option) => option),
  };
}

/** What a run takes from the options, checked before anything is opened. */
export function runSettings(options: RunOptions) {
  const { webhookUrl, listen } = options;
  if (webhookUrl === undefined && listen !== undefined) {
    const why = 'the webhook receiver listens only with webhookUrl (the public address the service posts to)';
    throw new UsageError(`listen: ${why}`);
  }
  return {
    ...estimateSettings(options),
    ...runNumbers(options, options.sim === true, (option) => option),
    partial: options.partial,
    resubmitInDoubt: options.resubmitInDoubt,
    noWait: options.noWait,
    webhooks:
      webhookUrl === undefined
        ? undefined
        : { url: parseWebhookUrl('webhookUrl', webhookUrl), listen: parseListen('listen', listen ?? DEFAULT_LISTEN) },
  };
}
