import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';

/** What a report command prints on stdout; its files are written whatever is chosen. */
export type OutputFormat = 'table' | 'json' | 'csv' | 'md';

export interface FormatArgs {
  json: boolean;
  format?: OutputFormat | undefined;
}

/** `--format` for a command that prints a report; `--json` stays, meaning `--format json`. */
export function withFormatOption<T>(argv: Argv<T>, formats: readonly OutputFormat[], csvIs: string): Argv<T & Pick<FormatArgs, 'format'>> {
  return argv.option('format', {
    choices: formats,
    describe: `what to print: table (default), json (as --json), csv (${csvIs}) or md (markdown for a pull request or a ticket)`,
  }) as Argv<T & Pick<FormatArgs, 'format'>>;
}

/** The format asked for; `--json` with another `--format` is two answers to one question. */
export function resolveFormat(args: FormatArgs): OutputFormat {
  if (args.json && args.format !== undefined && args.format !== 'json') {
    throw new UsageError(`--json and --format ${args.format} ask for two different outputs; give one (--json is --format json)`);
  }
  return args.json ? 'json' : (args.format ?? 'table');
}
