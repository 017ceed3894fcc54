import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import type { Selection, WebhookSettings } from '../runner/index.js';

export const DEFAULT_BASE_URL = 'https://api.deapi.ai';

/** `poll-ms` → `MEDIABATCH_POLL_MS`. */
function envName(option: string): string {
  return `MEDIABATCH_${option.toUpperCase().replace(/-/g, '_')}`;
}

/** Where each option filled from the environment came from, kept on the parsed arguments. */
const SOURCES = Symbol('mediabatch option sources');

type Sourced = { [SOURCES]?: Partial<Record<string, string>> };

/**
 * String options a `MEDIABATCH_<OPTION>` variable may also give, each described with `{env}`
 * standing for its variable's name. Precedence: the flag, then the variable, then the manifest
 * (budget), then the default. Left out on purpose: the token (MEDIABATCH_TOKEN is its only
 * variable, and there is no flag for it), and the switches that spend or reach further than asked
 * (`--resubmit-in-doubt`, `--partial`, `--allow-outside-files`): a variable set long ago in a
 * profile must never pay for a job twice or send files the command line did not allow.
 * `MEDIABATCH_BASE_URL` is read by resolveBaseUrl (session.ts), with the same precedence.
 * The variable's text is taken as typed, after yargs checked the flags, and checked by the same
 * parser as the flag's, whose message then names the variable.
 */
export function withEnvOptions<T, K extends string>(argv: Argv<T>, described: Record<K, string>) {
  const options = Object.keys(described) as K[];
  for (const option of options) {
    argv.option(option, { type: 'string', describe: described[option].replace('{env}', `env ${envName(option)}`) });
  }
  return argv.middleware((parsed) => {
    const record = parsed as Record<string, unknown> & Sourced;
    for (const option of options) {
      const name = envName(option);
      if (record[option] !== undefined || process.env[name] === undefined) continue;
      record[option] = process.env[name];
      // Several option groups add their own middleware: each adds to what the others found.
      record[SOURCES] = { ...record[SOURCES], [option]: name };
    }
  }) as Argv<T & Partial<Record<K, string>>>;
}

/** What a message calls an option: `MEDIABATCH_BUDGET` when the variable gave it, else `--budget`. */
export function optionLabel(args: object, option: string): string {
  return (args as Sourced)[SOURCES]?.[option] ?? `--${option}`;
}

/** The options every command shares (docs/commands.md, "Shared options"). */
export function withSharedOptions<T>(argv: Argv<T>) {
  const base = argv
    .option('base-url', {
      type: 'string',
      describe: `service base URL (env MEDIABATCH_BASE_URL, default ${DEFAULT_BASE_URL})`,
    })
    .option('token-file', {
      type: 'string',
      describe: 'read the API token from this file (else env MEDIABATCH_TOKEN)',
    });
  return withEnvOptions(base, { db: 'ledger file ({env}; default: <manifest>.mediabatch.db beside the manifest)' })
    .option('json', { type: 'boolean', default: false, describe: 'one JSON document on stdout' })
    .option('sim', {
      type: 'boolean',
      default: false,
      describe: 'start the built-in simulator on a loopback port and use it (no token, no network)',
    });
}

export type SharedArgs = Awaited<ReturnType<typeof withSharedOptions<object>>['argv']>;

/** For the commands that read a manifest's files: validate, estimate, run. */
export const OUTSIDE_FILES_OPTION = {
  type: 'boolean',
  default: false,
  describe: "let text_file and image paths point outside the manifest's folder (only for a manifest you trust)",
} as const;

export const PLAN_CHOICES = ['basic', 'premium', 'unlimited'] as const;

/**
 * What estimate and run share: the manifest and its files, the budget and plan, the selection
 * (`--only`, `--tag`, `--redo`) and the concurrency. The selection flags are repeatable rather
 * than greedy lists, so nothing after them is taken for a value (the manifest may come last); ids
 * never hold a comma, so `--only` and `--redo` also take comma lists, which is how a shell pastes
 * many of them: `--only "$(mediabatch status book.yaml --state failed --format ids | paste -sd, -)"`.
 */
export function withWorkOptions<T>(argv: Argv<T>, command: 'run' | 'estimate') {
  const verb = command === 'run' ? 'send' : 'count as to send';
  const redo =
    command === 'run'
      ? 'generate these done or failed jobs again, on purpose (priced and budgeted; an earlier result is kept beside the new one)'
      : 'count these done or failed jobs as generated again (priced and budgeted as run --redo would)';
  const plans = PLAN_CHOICES.join(', ');
  const forEstimate = command === 'run' ? '' : ', for the duration estimate';
  const base = withSharedOptions(argv).positional('manifest', { type: 'string', demandOption: true });
  return withEnvOptions(base, {
    budget: 'cap on the whole spend for this manifest, in USD ({env}; overrides the manifest)',
    plan: `pace requests for this account plan: ${plans} ({env}; default premium, unlimited under --sim)`,
    concurrency: `submits in flight at once${forEstimate} ({env}; default 8)`,
  })
    .option('allow-outside-files', OUTSIDE_FILES_OPTION)
    .option('only', {
      type: 'string',
      describe: `${verb} only jobs whose id matches: an id, or a glob with * ? [...] ("ch-0*"); repeatable, or a comma list`,
    })
    .option('tag', { type: 'string', describe: `${verb} only jobs carrying this tag (any of them, when repeated)` })
    .option('redo', { type: 'string', describe: `${redo}; repeatable, or a comma list` });
}

/** What a report command prints on stdout; its files are written whatever is chosen. */
export type OutputFormat = 'table' | 'json' | 'csv' | 'md' | 'ids' | 'jsonl';

/** How --help names each format; `csv` is said by the command. */
const SAID: Record<Exclude<OutputFormat, 'csv'>, string> = {
  table: 'table (default)',
  json: 'json (as --json)',
  md: 'md (markdown for a pull request or a ticket)',
  ids: 'ids (one job id a line, for --only)',
  jsonl: 'jsonl (one job a line, as the json document lists it)',
};

export function withFormatOption<T, F extends OutputFormat>(argv: Argv<T>, formats: readonly F[], csvIs: string) {
  const said = formats.map((format) => (format === 'csv' ? `csv (${csvIs})` : SAID[format as Exclude<OutputFormat, 'csv'>]));
  return argv.option('format', {
    choices: formats,
    describe: `what to print: ${said.slice(0, -1).join(', ')} or ${said.at(-1) ?? ''}`,
  }) as Argv<T & { format?: F | undefined }>;
}

/** The format asked for (a table by default); `--json` with another `--format` is two answers to one question. */
export function resolveFormat<F extends OutputFormat>(args: { json: boolean; format?: F }): F | 'table' | 'json' {
  if (args.json && args.format !== undefined && args.format !== 'json') {
    throw new UsageError(`--json and --format ${args.format} ask for two different outputs; give one (--json is --format json)`);
  }
  return args.json ? 'json' : (args.format ?? 'table');
}

/** A flag given once is a string; given again, yargs makes the values a list. */
type Repeated = string | string[] | undefined;

/** The selection the flags ask for; an empty value is refused (it would pick nothing, or everything). */
export function parseSelection(args: { only?: Repeated; tag?: Repeated; redo?: Repeated }): Selection {
  const only = values('--only', args.only, true);
  const tags = values('--tag', args.tag, false);
  const redo = values('--redo', args.redo, true);
  const globs = redo.filter((id) => /[*?[]/.test(id));
  if (globs.length > 0) {
    throw new UsageError(`--redo takes ids of done or failed jobs, not patterns: got ${globs.map((g) => JSON.stringify(g)).join(', ')} (list them with: mediabatch status <manifest> --state done,failed --format ids)`);
  }
  return { only, tags, redo };
}

/** Every value of a repeated flag, split at commas when `commas` and then trimmed (ids never hold spaces). */
export function commaList(given: Repeated, commas = true): string[] {
  if (given === undefined) return [];
  const all = (Array.isArray(given) ? given : [given]).flatMap((value) => (commas ? String(value).split(',') : [String(value)]));
  return commas ? all.map((value) => value.trim()) : all;
}

function values(flag: string, given: Repeated, commas: boolean): string[] {
  // A tag is taken as typed.
  const kept = commaList(given, commas);
  if (kept.some((value) => value.trim() === '')) {
    const what = flag === '--tag' ? 'a tag' : flag === '--redo' ? 'an id' : 'an id or a glob such as "ch-0*"';
    throw new UsageError(`${flag}: expected ${what}, got an empty value${commas ? ' (or an empty item of a comma list)' : ''}`);
  }
  return [...new Set(kept)];
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

/**
 * A whole number (a decimal one with `decimal`) from `min` to `max`, spaces around it allowed;
 * undefined when absent. `expected` says what was asked for, else the range does.
 */
export function parseNumber(
  flag: string,
  value: unknown,
  range: { min: number; max?: number; decimal?: boolean; unit?: string; expected?: string },
): number | undefined {
  const text = flagText(flag, value);
  if (text === undefined) return undefined;
  const n = (range.decimal === true ? DECIMAL : WHOLE).test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!(n >= range.min && n <= (range.max ?? Number.POSITIVE_INFINITY))) {
    const unit = range.unit === undefined ? '' : ` of ${range.unit}`;
    const expected = range.expected ?? `a whole number${unit} from ${range.min} to ${range.max}`;
    throw new UsageError(`${flag}: expected ${expected}, got ${given(text)}`);
  }
  return n;
}

/** `--budget`, MEDIABATCH_BUDGET or `--balance` (the label names which); undefined when not given. */
export function parseBudget(value: unknown, label = '--budget'): number | undefined {
  return parseNumber(label, value, { min: 0, decimal: true, expected: 'a number of USD ≥ 0 (such as 25 or 12.50)' });
}

/** `--concurrency` of run and estimate (or MEDIABATCH_CONCURRENCY); the runner's default when not given. */
export function parseConcurrency(args: { concurrency?: string | undefined }): number | undefined {
  return parseNumber(optionLabel(args, 'concurrency'), args.concurrency, { min: 1, max: 64 });
}

/** `--plan` or MEDIABATCH_PLAN, read as typed so that both are refused with the same words. */
export function parsePlan(label: string, value: unknown): (typeof PLAN_CHOICES)[number] | undefined {
  const text = flagText(label, value);
  if (text === undefined) return undefined;
  const plan = PLAN_CHOICES.find((choice) => choice === text.trim());
  if (plan === undefined) throw new UsageError(`${label}: expected one of ${PLAN_CHOICES.map((c) => `"${c}"`).join(', ')}, got ${given(text)}`);
  return plan;
}

export const DEFAULT_LISTEN = '127.0.0.1:8787';
/** The service takes a webhook URL of at most this many characters. */
const MAX_URL_CHARS = 2048;

/** The run's webhook settings from the flags, else the environment; undefined: follow by polling. */
export function webhookSettings(args: { 'webhook-url'?: string; listen?: string }, env: NodeJS.ProcessEnv): WebhookSettings | undefined {
  const [urlFrom, urlText] = args['webhook-url'] !== undefined ? ['--webhook-url', args['webhook-url']] : ['MEDIABATCH_WEBHOOK_URL', env['MEDIABATCH_WEBHOOK_URL']];
  const [listenFrom, listenText] = args.listen !== undefined ? ['--listen', args.listen] : ['MEDIABATCH_LISTEN', env['MEDIABATCH_LISTEN']];
  if (urlText === undefined || urlText === '') {
    if (args.listen !== undefined) throw new UsageError('--listen: the webhook receiver listens only with --webhook-url URL (the public address the service posts to)');
    return undefined;
  }
  return { url: parseWebhookUrl(urlFrom, urlText), listen: parseListen(listenFrom, listenText ?? DEFAULT_LISTEN) };
}

/** The service posts only to HTTPS addresses of at most 2048 characters: anything else is refused here, before a job is sent. */
export function parseWebhookUrl(from: string, text: string): string {
  const expected = `expected the public https:// address the service posts deliveries to (at most ${MAX_URL_CHARS} characters), such as https://hooks.example.com/mediabatch`;
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new UsageError(`${from}: ${expected}; got ${JSON.stringify(text)}, which is not a URL`);
  }
  if (url.protocol !== 'https:') throw new UsageError(`${from}: ${expected}; got a URL of scheme ${url.protocol.replace(/:$/, '')} (the service posts webhooks over HTTPS only)`);
  if (url.href.length > MAX_URL_CHARS) throw new UsageError(`${from}: ${expected}; got ${url.href.length} characters`);
  if (url.hash !== '') throw new UsageError(`${from}: ${expected}; got a URL with a #fragment, which never reaches a server`);
  return url.href;
}

/** `HOST:PORT`, `[IPv6]:PORT`; port 0 takes a free one (the run prints which). */
export function parseListen(from: string, text: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(text.trim());
  const port = Number(match?.[3]);
  const host = match?.[1] ?? match?.[2];
  if (match === null || host === undefined || !(port >= 0 && port <= 65_535)) {
    throw new UsageError(`${from}: expected HOST:PORT for the webhook receiver, such as ${DEFAULT_LISTEN} (your proxy or tunnel forwards to it); got ${JSON.stringify(text)}`);
  }
  return { host, port };
}
