import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Argv } from 'yargs';
import { parseBaseUrl } from '../api/base-url.js';
import { ConfigError, UsageError } from '../errors.js';

export const DEFAULT_BASE_URL = 'https://api.deapi.ai';

/** The options every command shares (PRODUCT.md, "Commands"). */
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
    .option('db', { type: 'string', describe: 'ledger file (default: <manifest>.mediabatch.db beside the manifest)' })
    .option('json', { type: 'boolean', default: false, describe: 'one JSON document on stdout' })
    .option('sim', {
      type: 'boolean',
      default: false,
      describe: 'start the built-in simulator on a loopback port and use it (no token, no network)',
    }) as Argv<T & SharedArgs>;
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
  /**
   * Written by `run` only: before its first submit (the trace of sent requests that outlives a
   * lost ledger) and again at its end. `estimate` never touches these.
   */
  runJson: string;
  runCsv: string;
  /** `<name>.report.json`, what mediabatch 0.1 wrote for both: still read as a trace of a run. */
  legacyReport: string;
}

/** Files that live beside a manifest `<dir>/<name>.yaml`: ledger, results folder, reports. */
export function manifestPaths(manifestArg: string, dbArg?: string, outArg?: string): ManifestPaths {
  const manifest = path.resolve(manifestArg);
  const dir = path.dirname(manifest);
  const name = path.basename(manifest).replace(/\.ya?ml$/i, '');
  return {
    manifest,
    db: path.resolve(dbArg ?? path.join(dir, `${name}.mediabatch.db`)),
    out: path.resolve(outArg ?? path.join(dir, `${name}.out`)),
    estimateJson: path.join(dir, `${name}.estimate.json`),
    estimateCsv: path.join(dir, `${name}.estimate.csv`),
    runJson: path.join(dir, `${name}.run.json`),
    runCsv: path.join(dir, `${name}.run.csv`),
    legacyReport: path.join(dir, `${name}.report.json`),
  };
}

export function parseBudget(value: unknown, flag = '--budget'): number | undefined {
  if (value === undefined) return undefined;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(n) || n < 0) throw new UsageError(`${flag}: expected a number of USD ≥ 0, got ${JSON.stringify(value)}`);
  return n;
}
