import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { ExitCode, isMediabatchError, UsageError } from '../errors.js';
import { ManifestError } from '../manifest/errors.js';
import { estimateCommand } from './commands/estimate.js';
import { modelsCommand } from './commands/models.js';
import { runCommand } from './commands/run.js';
import { schemaCommand } from './commands/schema.js';
import { simCommand } from './commands/sim.js';
import { statusCommand } from './commands/status.js';
import { validateCommand } from './commands/validate.js';
import { logLine } from './output.js';

/** Each command's handler returns its exit code through this holder. */
export interface CommandResult {
  exitCode: number;
}

export async function main(argv: string[]): Promise<number> {
  const result: CommandResult = { exitCode: ExitCode.ok };
  await yargs(argv)
    .scriptName('mediabatch')
    .usage('$0 <command> [options]\n\nBatch runner for text-to-speech and image-to-video jobs: validate, price, budget, run, resume.')
    .command(validateCommand(result))
    .command(estimateCommand(result))
    .command(runCommand(result))
    .command(statusCommand(result))
    .command(modelsCommand(result))
    .command(simCommand(result))
    .command(schemaCommand(result))
    .demandCommand(1, 'give a command; see mediabatch --help')
    .strict()
    .recommendCommands()
    .wrap(Math.min(110, process.stdout.columns ?? 100))
    .fail((message, error) => {
      throw error ?? new UsageError(`${message}\nSee mediabatch --help.`);
    })
    .help()
    .version()
    .parseAsync();
  return result.exitCode;
}

/** The only place an error becomes text and an exit code. */
export function report(error: unknown): number {
  if (error instanceof ManifestError) {
    logLine(error.message);
    return error.exitCode;
  }
  if (isMediabatchError(error)) {
    logLine(`mediabatch: ${error.message}`);
    return error.exitCode;
  }
  logLine(error instanceof Error ? (error.stack ?? error.message) : String(error));
  logLine('mediabatch: this is a bug in mediabatch (an unexpected internal error); the ledger keeps what was done.');
  return 70;
}

export function start(): void {
  main(hideBin(process.argv)).then(
    (code) => process.exit(code),
    (error: unknown) => process.exit(report(error)),
  );
}
