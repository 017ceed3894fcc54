import type { CommandModule } from 'yargs';
import { UsageError } from '../../errors.js';
import { formatStatusText, statusJson } from '../../report/status.js';
import type { CommandResult } from '../main.js';
import { openLedgerToRead } from '../ledger.js';
import { manifestPaths, withSharedOptions, type SharedArgs } from '../options.js';
import { useColor, writeJsonDocument, writeStdout } from '../output.js';
import { storedBudget, summarize } from '../../runner/reports.js';

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
        // validate and estimate keep caches here but record no job: an empty table would say less.
        if (summary.jobs.length === 0) {
          throw new UsageError(`nothing has been run for ${args.manifest} yet: the ledger ${paths.db} records no job (or pass --db PATH)`);
        }
        if (args.json) await writeJsonDocument(statusJson(summary));
        else await writeStdout(formatStatusText(summary, { color: useColor(process.stdout) }));
        result.exitCode = 0;
      } finally {
        await ledger.close();
      }
    },
  };
}
