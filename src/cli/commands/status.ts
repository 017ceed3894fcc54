import { existsSync } from 'node:fs';
import path from 'node:path';
import type { CommandModule } from 'yargs';
import { UsageError } from '../../errors.js';
import { runCsvChunks } from '../../report/csv.js';
import { statusMarkdown } from '../../report/markdown.js';
import { statusJsonChunks } from '../../report/status-document.js';
import { formatStatusText, type StatusSummary } from '../../report/status.js';
import { storedBudget, summarize } from '../../runner/reports.js';
import { resolveFormat, withFormatOption, type FormatArgs, type OutputFormat } from '../format.js';
import { claimLedger, openLedgerFor } from '../ledger.js';
import type { CommandResult } from '../main.js';
import { manifestPaths, withSharedOptions, type SharedArgs } from '../options.js';
import { useColor, writeStdout, writeStdoutChunks } from '../output.js';

interface StatusArgs extends SharedArgs, FormatArgs {
  manifest: string;
}

export function statusCommand(result: CommandResult): CommandModule<object, StatusArgs> {
  return {
    command: 'status <manifest>',
    describe: 'read the ledger only: counts by state, spend, jobs in doubt, failures, results',
    builder: (y) =>
      withFormatOption(withSharedOptions(y), ['table', 'json', 'csv', 'md'], 'one job a row, as <name>.run.csv').positional('manifest', {
        type: 'string',
        demandOption: true,
      }),
    handler: async (args) => {
      const format = resolveFormat(args);
      const paths = manifestPaths(args.manifest, args.db);
      if (!existsSync(paths.db)) {
        throw new UsageError(`no ledger at ${paths.db}: nothing has been run for ${args.manifest} yet (or pass --db PATH)`);
      }
      const ledger = await openLedgerFor(paths.db, 'read-only');
      try {
        await claimLedger(ledger, paths.manifest);
        const summary = await summarize(ledger, await storedBudget(ledger));
        // validate and estimate keep caches here but record no job: an empty table would say less.
        if (summary.jobs.length === 0) {
          throw new UsageError(`nothing has been run for ${args.manifest} yet: the ledger ${paths.db} records no job (or pass --db PATH)`);
        }
        await print(summary, format, path.basename(paths.manifest));
        result.exitCode = 0;
      } finally {
        await ledger.close();
      }
    },
  };
}

function print(summary: StatusSummary, format: OutputFormat, title: string): Promise<void> {
  switch (format) {
    case 'json':
      return writeStdoutChunks(statusJsonChunks(summary));
    case 'csv':
      return writeStdoutChunks(runCsvChunks(summary.jobs));
    case 'md':
      return writeStdout(statusMarkdown(summary, title));
    case 'table':
      return writeStdout(formatStatusText(summary, { color: useColor(process.stdout) }));
  }
}
