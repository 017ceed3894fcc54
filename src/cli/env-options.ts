import type { MiddlewareFunction } from 'yargs';

/**
 * Options a `MEDIABATCH_<OPTION>` environment variable may give (`MEDIABATCH_BUDGET`,
 * `MEDIABATCH_POLL_MS`, …). Precedence: the flag, then the variable, then the manifest (budget),
 * then the default. Left out on purpose: the token (MEDIABATCH_TOKEN is its only variable, and
 * there is no flag for it), and the switches that spend or reach further than asked
 * (`--resubmit-in-doubt`, `--partial`, `--allow-outside-files`): a variable set long ago in a
 * profile must never pay for a job twice or send files the command line did not allow.
 * `MEDIABATCH_BASE_URL` is read by resolveBaseUrl (options.ts), with the same precedence.
 */
export const ENV_OPTIONS = ['db', 'budget', 'plan', 'concurrency', 'out', 'poll-ms', 'max-result-mb', 'retries'] as const;

export type EnvOption = (typeof ENV_OPTIONS)[number];

/** `poll-ms` → `MEDIABATCH_POLL_MS`. */
export function envName(option: string): string {
  return `MEDIABATCH_${option.toUpperCase().replace(/-/g, '_')}`;
}

/** Where each option filled from the environment came from, kept on the parsed arguments. */
const SOURCES = Symbol('mediabatch option sources');

type Sourced = { [SOURCES]?: Partial<Record<string, string>> };

/**
 * Middleware for a command's builder (`y.middleware(…)`, run after yargs checked the flags): each
 * of `options` not given as a flag takes its variable's text, as typed, and remembers where it
 * came from. Every such option is read as a string and checked by one parser in options.ts, the
 * same for the flag and the variable, whose message then names the variable.
 */
export function envOptions(options: readonly EnvOption[], env: NodeJS.ProcessEnv): MiddlewareFunction {
  return (argv) => {
    const record = argv as Record<string, unknown> & Sourced;
    const sources: Partial<Record<string, string>> = {};
    for (const option of options) {
      const name = envName(option);
      const value = env[name];
      if (record[option] !== undefined || value === undefined) continue;
      record[option] = value;
      sources[option] = name;
    }
    // Several option groups add their own middleware: each adds to what the others found.
    record[SOURCES] = { ...record[SOURCES], ...sources };
  };
}

/** What a message calls an option: `MEDIABATCH_BUDGET` when the variable gave it, else `--budget`. */
export function optionLabel(args: object, option: string): string {
  return (args as Sourced)[SOURCES]?.[option] ?? `--${option}`;
}

/** For --help: where else the option may come from. */
export function envHint(option: EnvOption): string {
  return `env ${envName(option)}`;
}
