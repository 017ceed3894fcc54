import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { BOUNDS, DEFAULT_BASE_URL, DEFAULT_LISTEN, parseListen, parseNumber, parseWebhookUrl, PLAN_CHOICES } from '../lib/options.js';
import type { WebhookSettings } from '../runner/index.js';


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

/** `--concurrency` of run and estimate (or MEDIABATCH_CONCURRENCY); the runner's default when not given. */
export function parseConcurrency(args: { concurrency?: string | undefined }): number | undefined {
  return parseNumber(optionLabel(args, 'concurrency'), args.concurrency, BOUNDS.concurrency);
}

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
