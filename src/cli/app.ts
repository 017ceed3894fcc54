import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { ConfigError, ExitCode, UsageError } from '../errors.js';
import { systemClock, type Clock } from '../clock.js';
import { asksForJson, INTERNAL_ERROR_EXIT } from './output.js';

/** What every command is given beside its arguments; a command returns its exit code or throws. */
export interface CommandContext {
  /** The command line as typed, which a run's resume hint repeats. */
  readonly argv: readonly string[];
  readonly clock: Clock;
  /** Set by a command whose --json document already carries the error it then throws. */
  errorInDocument: boolean;
}

/** A command's module: its options, and what it does. */
interface CommandFile {
  builder?: (y: Argv) => Argv;
  handler: (args: never, context: CommandContext) => Promise<number>;
}

/**
 * Each command's module is loaded only when that command runs or shows its --help, as
 * changesets does: `mediabatch validate` never loads the runner, the simulator or the HTTP client.
 */
const COMMANDS: readonly (readonly [string, () => Promise<CommandFile>, string])[] = [
  ['validate <manifest>', () => import('./commands/validate.js'),
    'check every job of a manifest and report every problem at once; sends no generation request'],
  ['estimate <manifest>', () => import('./commands/estimate.js'),
    'price every job and print the cost report; exit 3 if over budget; submits nothing'],
  ['run <manifest>', () => import('./commands/run.js'),
    'estimate, enforce the budget, submit, follow and download; run it again to resume'],
  ['status <manifest>', () => import('./commands/status.js'),
    'read the ledger only: counts by state, spend, jobs in doubt, failures, results'],
  ['log <manifest>', () => import('./commands/log.js'),
    "print the ledger's event history, oldest first (reads the ledger only)"],
  ['report <manifest>', () => import('./commands/report.js'),
    'write the review page <name>.report.html from the ledger alone: totals, every job with filters, players for the results'],
  ['models', () => import('./commands/models.js'), 'list the models of the account, with voices, languages and limits'],
  ['sim', () => import('./commands/sim.js'), 'run the built-in simulator of the service as a loopback HTTP server'],
  ['schema', () => import('./commands/schema.js'), "print the manifest's JSON Schema (for editor completion)"],
];

export async function main(argv: string[]): Promise<number> {
  // Where the real time enters: every command that reads the time is given this clock.
  const context: CommandContext = { argv, clock: systemClock, errorInDocument: false };
  let exitCode: number = ExitCode.ok;
  try {
    requireCurrentFolder();
    await parser(argv, context, (code) => (exitCode = code)).parseAsync();
  } catch (error) {
    const { reportError } = await import('./error-document.js');
    // Read from the raw arguments: a usage error (unknown flag, missing argument) has no parsed ones.
    return reportError(error, { json: asksForJson(argv) && !context.errorInDocument });
  }
  return exitCode;
}

function parser(argv: string[], context: CommandContext, done: (exitCode: number) => void): Argv {
  const cli = yargs(argv)
    .scriptName('mediabatch')
    .usage('$0 <command> [options]\n\nBatch runner for a paid media-generation service: validate, price, budget, run, resume.');
  for (const [command, load, describe] of COMMANDS) {
    cli.command(
      command,
      describe,
      async (y) => (await load()).builder?.(y) ?? y,
      async (args) => done(await (await load()).handler(args as never, context)),
    );
  }
  return cli
    .middleware(stdinManifestArgument(argv))
    // yargs answers `--get-yargs-completions` itself: the script calls it back with the words typed so far.
    .completion('completion', 'print the shell completion script (bash or zsh: mediabatch completion >> ~/.bashrc)')
    .demandCommand(1, 'give a command; see mediabatch --help')
    .strict()
    .recommendCommands()
    .wrap(Math.min(110, process.stdout.columns ?? 100))
    .fail((message, error) => {
      throw error ?? new UsageError(`${message}; see mediabatch --help`);
    })
    .help()
    .version();
}

/** yargs, and every relative path, ask for the current folder: one deleted under the shell has none. */
function requireCurrentFolder(): void {
  try {
    process.cwd();
  } catch (error) {
    throw new ConfigError(
      'the current folder no longer exists (it was deleted or moved while the shell was in it): cd into an existing folder and run the command again',
      'E_NO_CWD',
      error,
    );
  }
}

/**
 * yargs reads a lone `-` as an empty string (yargs-parser #381): put back the manifest `-` that
 * means "jobs as JSON Lines on stdin" (STDIN_MANIFEST, spelt out here so that loading the CLI
 * does not load the manifest's modules) when the raw arguments (before `--`) hold one.
 */
function stdinManifestArgument(argv: readonly string[]): (args: Record<string, unknown>) => void {
  const end = argv.indexOf('--');
  const givesDash = (end === -1 ? argv : argv.slice(0, end)).includes('-');
  return (args) => {
    if (givesDash && args.manifest === '') args.manifest = '-';
  };
}

export function start(): void {
  main(hideBin(process.argv)).then(
    (code) => process.exit(code),
    () => process.exit(INTERNAL_ERROR_EXIT),
  );
}
