import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { ConfigError, ExitCode, isMediabatchError, UsageError } from '../errors.js';
import { ManifestError } from '../manifest/errors.js';
import { STDIN_MANIFEST } from '../manifest/open.js';
import { estimateCommand } from './commands/estimate.js';
import { logCommand } from './commands/log.js';
import { modelsCommand } from './commands/models.js';
import { reportCommand } from './commands/report.js';
import { runCommand } from './commands/run.js';
import { schemaCommand } from './commands/schema.js';
import { simCommand } from './commands/sim.js';
import { statusCommand } from './commands/status.js';
import { validateCommand } from './commands/validate.js';
import { errorDocument, INTERNAL_ERROR_EXIT } from './error-document.js';
import { asksForJson, logLine, writeJsonDocument } from './output.js';
import { systemClock } from '../clock.js';

/** Each command's handler returns its exit code through this holder. */
export interface CommandResult {
  exitCode: number;
  /** Set by a command whose --json document already carries the error it then throws. */
  errorInDocument?: boolean;
}

export async function main(argv: string[]): Promise<number> {
  const result: CommandResult = { exitCode: ExitCode.ok };
  try {
    requireCurrentFolder();
    await parse(argv, result);
  } catch (error) {
    // Read from the raw arguments: a usage error (unknown flag, missing argument) has no parsed ones.
    return report(error, { json: asksForJson(argv) && result.errorInDocument !== true });
  }
  return result.exitCode;
}

async function parse(argv: string[], result: CommandResult): Promise<void> {
  // Where the real time enters: every command that reads the time is given this clock.
  const clock = systemClock;
  await yargs(argv)
    .scriptName('mediabatch')
    .usage('$0 <command> [options]\n\nBatch runner for text-to-speech and image-to-video jobs: validate, price, budget, run, resume.')
    .command(validateCommand(result))
    .command(estimateCommand(result, clock))
    .command(runCommand(result, argv, clock))
    .command(statusCommand(result))
    .command(logCommand(result))
    .command(reportCommand(result, clock))
    .command(modelsCommand(result))
    .command(simCommand(result))
    .command(schemaCommand(result))
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
    .version()
    .parseAsync();
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
 * means "jobs as JSON Lines on stdin" when the raw arguments (before `--`) hold one.
 */
function stdinManifestArgument(argv: readonly string[]): (args: Record<string, unknown>) => void {
  const end = argv.indexOf('--');
  const givesDash = (end === -1 ? argv : argv.slice(0, end)).includes(STDIN_MANIFEST);
  return (args) => {
    if (givesDash && args.manifest === '') args.manifest = STDIN_MANIFEST;
  };
}

/**
 * The only place an error becomes text and an exit code: a line on stderr for the person, and
 * under --json the same message as a document on stdout for scripts.
 */
export async function report(error: unknown, options: { json: boolean }): Promise<number> {
  const document = errorDocument(error);
  if (error instanceof ManifestError) {
    logLine(error.message);
  } else if (isMediabatchError(error)) {
    logLine(`mediabatch: ${error.message}`);
  } else {
    logLine(error instanceof Error ? (error.stack ?? error.message) : String(error));
    logLine('mediabatch: this is a bug in mediabatch (an unexpected internal error); the ledger keeps what was done.');
  }
  if (options.json) await writeJsonDocument(document);
  return document.error.exit_code;
}

export function start(): void {
  main(hideBin(process.argv)).then(
    (code) => process.exit(code),
    () => process.exit(INTERNAL_ERROR_EXIT),
  );
}
