import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';

/** What a report command prints on stdout; its files are written whatever is chosen. */
export type OutputFormat = 'table' | 'json' | 'csv' | 'md' | 'ids' | 'jsonl';

/** The formats every report command has: `--json` is `--format json`, and a table is the default. */
type Always = 'table' | 'json';

export interface FormatArgs<F extends OutputFormat = OutputFormat> {
  json: boolean;
  format?: F | undefined;
}

/** How --help names each format; `csv` is said by the command. */
const SAID: Record<Exclude<OutputFormat, 'csv'>, string> = {
  table: 'table (default)',
  json: 'json (as --json)',
  md: 'md (markdown for a pull request or a ticket)',
  ids: 'ids (one job id a line, for --only)',
  jsonl: 'jsonl (one job a line, as the json document lists it)',
};

/** `--format` for a command that prints a report; `--json` stays, meaning `--format json`. */
export function withFormatOption<T, F extends OutputFormat>(argv: Argv<T>, formats: readonly (F & OutputFormat)[], csvIs: string): Argv<T & Pick<FormatArgs<F>, 'format'>> {
  const said = formats.map((format) => (format === 'csv' ? `csv (${csvIs})` : SAID[format as Exclude<OutputFormat, 'csv'>]));
  return argv.option('format', {
    choices: formats,
    describe: `what to print: ${said.slice(0, -1).join(', ')} or ${said.at(-1) ?? ''}`,
  }) as Argv<T & Pick<FormatArgs<F>, 'format'>>;
}

/** The format asked for; `--json` with another `--format` is two answers to one question. */
export function resolveFormat<F extends OutputFormat>(args: FormatArgs<F>): F | Always {
  if (args.json && args.format !== undefined && args.format !== 'json') {
    throw new UsageError(`--json and --format ${args.format} ask for two different outputs; give one (--json is --format json)`);
  }
  return args.json ? 'json' : (args.format ?? 'table');
}
