import path from 'node:path';
import type { CommandModule } from 'yargs';
import { UsageError } from '../../errors.js';
import { runCsvChunks } from '../../report/csv.js';
import { statusMarkdown } from '../../report/markdown.js';
import { statusJsonChunks } from '../../report/status-document.js';
import { formatStatusText, type StatusSummary } from '../../report/status.js';
import { runJobs, storedBudget, summarize } from '../../runner/reports.js';
import type { Ledger } from '../../store/index.js';
import { resolveFormat, withFormatOption, type FormatArgs, type OutputFormat } from '../format.js';
import { openLedgerToRead } from '../ledger.js';
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
      const ledger = await openLedgerToRead(args.manifest, args.db);
      try {
        const summary = await summarize(ledger, await storedBudget(ledger));
        // estimate records the jobs and validate caches the catalogue, but nothing was sent: a
        // table of pending jobs would say less than this.
        if (summary.spentMicro === 0 && summary.counts.pending + summary.counts.skipped === Object.values(summary.counts).reduce((a, b) => a + b, 0)) {
          throw new UsageError(`nothing has been run for ${args.manifest} yet: the ledger ${paths.db} records no job sent (or pass --db PATH)`);
        }
        await print(ledger, summary, format, path.basename(paths.manifest));
        result.exitCode = 0;
      } finally {
        await ledger.close();
      }
    },
  };
}

/** Every job of the JSON and the CSV comes from the ledger a window at a time. */
function print(ledger: Ledger, summary: StatusSummary, format: OutputFormat, title: string): Promise<void> {
  switch (format) {
    case 'json':
      return writeStdoutChunks(statusJsonChunks(summary, runJobs(ledger)));
    case 'csv':
      return writeStdoutChunks(runCsvChunks(runJobs(ledger)));
    case 'md':
      return writeStdout(statusMarkdown(summary, title));
    case 'table':
      return writeStdout(formatStatusText(summary, { color: useColor(process.stdout) }));
  }
}
