import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Argv } from 'yargs';
import { parseBaseUrl } from '../api/base-url.js';
import { ConfigError, UsageError } from '../errors.js';
import { envHint, envOptions, optionLabel } from './env-options.js';
import { STDIN_MANIFEST } from '../manifest/open.js';

export const DEFAULT_BASE_URL = 'https://api.deapi.ai';

/** The options every command shares (docs/commands.md, "Shared options"). */
export interface SharedArgs {
  'base-url'?: string | undefined;
  'token-file'?: string | undefined;
  db?: string | undefined;
  json: boolean;
  sim: boolean;
}

export function withSharedOptions<T>(argv: Argv<T>): Argv<T & SharedArgs> {
  return argv
    .option('base-url', {
      type: 'string',
      describe: `service base URL (env MEDIABATCH_BASE_URL, default ${DEFAULT_BASE_URL})`,
    })
    .option('token-file', {
      type: 'string',
      describe: 'read the API token from this file (else env MEDIABATCH_TOKEN)',
    })
    .option('db', { type: 'string', describe: `ledger file (${envHint('db')}; default: <manifest>.mediabatch.db beside the manifest)` })
    .option('json', { type: 'boolean', default: false, describe: 'one JSON document on stdout' })
    .option('sim', {
      type: 'boolean',
      default: false,
      describe: 'start the built-in simulator on a loopback port and use it (no token, no network)',
    })
    .middleware(envOptions(['db'], process.env)) as Argv<T & SharedArgs>;
}

/** For the commands that read a manifest's files: validate, estimate, run. */
export interface ManifestFileArgs {
  'allow-outside-files': boolean;
}

export function withManifestFileOptions<T>(argv: Argv<T>): Argv<T & ManifestFileArgs> {
  return argv.option('allow-outside-files', {
    type: 'boolean',
    default: false,
    describe: "let text_file and image paths point outside the manifest's folder (only for a manifest you trust)",
  }) as Argv<T & ManifestFileArgs>;
}

/** The base URL from --base-url, else MEDIABATCH_BASE_URL, else the service's, checked by parseBaseUrl. */
export function resolveBaseUrl(args: SharedArgs, env: NodeJS.ProcessEnv): string {
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
export function readToken(args: SharedArgs, env: NodeJS.ProcessEnv): string {
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

export interface ManifestPaths {
  manifest: string;
  db: string;
  out: string;
  /** Written by `estimate` only. */
  estimateJson: string;
  estimateCsv: string;
  estimateGroupsCsv: string;
  estimateMd: string;
  /**
   * Written by `run` only: before its first submit (the trace of sent requests that outlives a
   * lost ledger) and again at its end. `estimate` never touches these.
   */
  runJson: string;
  runCsv: string;
  /** `<name>.report.json`, what mediabatch 0.1 wrote for both: still read as a trace of a run. */
  legacyReport: string;
  /** The review page: written by `report`, and by `run` when it ends. */
  reportHtml: string;
}

/**
 * Files that live beside a manifest `<dir>/<name>.yaml`: ledger, results folder, reports. A
 * ledger given with `--db` names the results folder and the reports instead (`--db x.mediabatch.db`:
 * `x.out/`, `x.run.json` beside the manifest): `a.yaml` and `a.yml` in one folder, or two
 * ledgers of one manifest, then never share a folder or overwrite each other's reports.
 */
export function manifestPaths(manifestArg: string, dbArg?: string, outArg?: string): ManifestPaths {
  const manifest = path.resolve(manifestArg);
  requireNamesForStdin({ manifest: manifestArg, db: dbArg }, false);
  // Jobs from stdin keep their reports beside the ledger they were given.
  const dir = path.dirname(manifestArg === STDIN_MANIFEST && dbArg !== undefined ? path.resolve(dbArg) : manifest);
  const name = dbArg === undefined ? path.basename(manifest).replace(/\.ya?ml$/i, '') : ledgerStem(dbArg);
  return {
    manifest,
    db: path.resolve(dbArg ?? path.join(dir, `${name}.mediabatch.db`)),
    out: path.resolve(outArg ?? path.join(dir, `${name}.out`)),
    estimateJson: path.join(dir, `${name}.estimate.json`),
    estimateCsv: path.join(dir, `${name}.estimate.csv`),
    estimateGroupsCsv: path.join(dir, `${name}.estimate.groups.csv`),
    estimateMd: path.join(dir, `${name}.estimate.md`),
    runJson: path.join(dir, `${name}.run.json`),
    runCsv: path.join(dir, `${name}.run.csv`),
    legacyReport: path.join(dir, `${name}.report.json`),
    reportHtml: path.join(dir, `${name}.report.html`),
  };
}

/** `x.mediabatch.db` → `x`; `x.db` → `x`; `x` → `x`. */
function ledgerStem(db: string): string {
  const base = path.basename(db);
  return base.replace(/\.mediabatch\.db$/i, '').replace(/\.[^.]*$/, '') || base;
}

/*
 * Numeric flags are read as strings and checked here: yargs' own number parsing turns "" into 0
 * and "abc" into NaN, and loses what was typed, which a message must quote.
 */

/** The text a flag (or its variable) was given, once; undefined when absent (repeated flags come as arrays). */
function flagText(flag: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) {
    const all = value.map((item) => JSON.stringify(String(item))).join(', ');
    throw new UsageError(`${flag}: given ${value.length} times (${all}); give it once`);
  }
  return String(value);
}

function given(text: string): string {
  return text.trim() === '' ? 'an empty value' : JSON.stringify(text);
}

/** Plain decimal notation only: "1e3" or "0x10" as an amount of money is more likely a slip. */
const DECIMAL = /^(\d+(\.\d*)?|\.\d+)$/;
const WHOLE = /^\d+$/;

/** A decimal number from `min` to `max` (spaces around it allowed), or undefined when absent. */
export function parseDecimal(flag: string, value: unknown, range: { min: number; max?: number; expected: string }): number | undefined {
  const text = flagText(flag, value);
  if (text === undefined) return undefined;
  const n = DECIMAL.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!(n >= range.min && n <= (range.max ?? Number.POSITIVE_INFINITY))) {
    throw new UsageError(`${flag}: expected ${range.expected}, got ${given(text)}`);
  }
  return n;
}

/** A whole number from `min` to `max` (spaces around it allowed), or undefined when absent. */
export function parseWholeNumber(flag: string, value: unknown, range: { min: number; max: number; unit?: string }): number | undefined {
  const text = flagText(flag, value);
  if (text === undefined) return undefined;
  const n = WHOLE.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!(n >= range.min && n <= range.max)) {
    const what = range.unit === undefined ? 'a whole number' : `a whole number of ${range.unit}`;
    throw new UsageError(`${flag}: expected ${what} from ${range.min} to ${range.max}, got ${given(text)}`);
  }
  return n;
}

export function parseUsd(flag: string, value: unknown): number | undefined {
  return parseDecimal(flag, value, { min: 0, expected: 'a number of USD ≥ 0 (such as 25 or 12.50)' });
}

/** `--budget` or MEDIABATCH_BUDGET (the label names which); undefined when neither is given. */
export function parseBudget(value: unknown, label = '--budget'): number | undefined {
  return parseUsd(label, value);
}

export const DEFAULT_CONCURRENCY = 8;

/** `--concurrency` of run and estimate (or MEDIABATCH_CONCURRENCY): submits in flight at once. */
export function parseConcurrency(args: { concurrency?: string | undefined }): number {
  return parseWholeNumber(optionLabel(args, 'concurrency'), args.concurrency, { min: 1, max: 64 }) ?? DEFAULT_CONCURRENCY;
}

export const PLAN_CHOICES = ['basic', 'premium', 'unlimited'] as const;

/** `--plan` or MEDIABATCH_PLAN, read as typed so that both are refused with the same words. */
export function parsePlan(label: string, value: unknown): (typeof PLAN_CHOICES)[number] | undefined {
  const text = flagText(label, value);
  if (text === undefined) return undefined;
  const plan = PLAN_CHOICES.find((choice) => choice === text.trim());
  if (plan === undefined) throw new UsageError(`${label}: expected one of ${PLAN_CHOICES.map((c) => `"${c}"`).join(', ')}, got ${given(text)}`);
  return plan;
}

/**
 * Jobs read from stdin (the manifest `-`) have no file to name the ledger, the results folder and
 * the reports after: the ledger must be given (`--db`), and for a run the results folder (`--out`).
 */
export function requireNamesForStdin(args: { manifest: string; db?: string | undefined; out?: string | undefined }, run: boolean): void {
  if (args.manifest !== STDIN_MANIFEST) return;
  const missing = [args.db === undefined ? '--db PATH' : undefined, run && args.out === undefined ? '--out DIR' : undefined].filter((flag) => flag !== undefined);
  if (missing.length === 0) return;
  throw new UsageError(`reading jobs from stdin (the manifest -) needs ${missing.join(' and ')}: there is no manifest file to name ${run ? 'them' : 'it'} after`);
}
