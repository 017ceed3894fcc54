import type { CommandModule } from 'yargs';
import { UsageError } from '../../errors.js';
import { formatStatusText, statusJobJson, statusJsonHead } from '../../report/status.js';
import type { CommandResult } from '../main.js';
import { openLedgerToRead } from '../ledger.js';
import { manifestPaths, withSharedOptions, type SharedArgs } from '../options.js';
import { useColor, writeJsonStream, writeStdout } from '../output.js';
import { mapAsync, runJobs, storedBudget, summarize } from '../../runner/reports.js';

interface StatusArgs extends SharedArgs {
  manifest: string;
}

export function statusCommand(result: CommandResult): CommandModule<object, StatusArgs> {
  return {
    command: 'status <manifest>',
    describe: 'read the ledger only: counts by state, spend, jobs in doubt, failures, results',
    builder: (y) => withSharedOptions(y).positional('manifest', { type: 'string', demandOption: true }),
    handler: async (args) => {
      const paths = manifestPaths(args.manifest, args.db);
      const ledger = await openLedgerToRead(args.manifest, args.db);
      try {
        const summary = await summarize(ledger, await storedBudget(ledger));
        // estimate records the jobs and validate caches the catalogue, but nothing was sent: a
        // table of pending jobs would say less than this.
        if (summary.spentMicro === 0 && summary.counts.pending + summary.counts.skipped === Object.values(summary.counts).reduce((a, b) => a + b, 0)) {
          throw new UsageError(`nothing has been run for ${args.manifest} yet: the ledger ${paths.db} records no job sent (or pass --db PATH)`);
        }
        if (args.json) await writeJsonStream(statusJsonHead(summary), 'jobs', mapAsync(runJobs(ledger), statusJobJson));
        else await writeStdout(formatStatusText(summary, { color: useColor(process.stdout) }));
        result.exitCode = 0;
      } finally {
        await ledger.close();
      }
    },
  };
}
