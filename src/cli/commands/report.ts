import type { Argv } from 'yargs';
import { UsageError } from '../../errors.js';
import { formatCount } from '../../report/text.js';
import { writeReviewPage } from '../../runner/index.js';
import { storedBudget } from '../../runner/reports.js';
import type { CommandContext } from '../app.js';
import { manifestPaths, openLedgerToRead } from '../ledger.js';
import { openFile } from '../open-file.js';
import { withSharedOptions } from '../options.js';
import { logLine, writeJsonDocument, writeStdout } from '../output.js';

export function builder(y: Argv) {
  return withSharedOptions(y)
    .positional('manifest', { type: 'string', demandOption: true })
    .option('open', { type: 'boolean', default: false, describe: "open the page with the system's default program" });
}

type ReportArgs = Awaited<ReturnType<typeof builder>['argv']>;

export async function handler(args: ReportArgs, { clock }: CommandContext): Promise<number> {
  const paths = manifestPaths(args.manifest, args.db);
  const ledger = await openLedgerToRead(args.manifest, args.db);
  let jobs: number;
  try {
    jobs = Object.values(await ledger.countsByState('report')).reduce((sum, n) => sum + n, 0);
    if (jobs === 0) {
      throw new UsageError(`nothing has been run for ${args.manifest} yet: the ledger ${paths.db} records no job (or pass --db PATH)`);
    }
    await writeReviewPage(ledger, paths.reportHtml, { manifest: paths.manifest, budgetMicro: await storedBudget(ledger), generatedAt: new Date(clock.nowMs()) });
  } finally {
    await ledger.close();
  }
  // The page is written whatever the opener does: a failure to show it is said, not an error.
  const notOpened = args.open ? await openFile(paths.reportHtml) : undefined;
  if (notOpened !== undefined) logLine(`mediabatch: could not open the page (${notOpened}); open it in a browser: ${paths.reportHtml}`);
  if (args.json) await writeJsonDocument({ page: paths.reportHtml, jobs, opened: args.open && notOpened === undefined });
  else await writeStdout(`wrote ${paths.reportHtml} (${formatCount(jobs)} job${jobs === 1 ? '' : 's'})`);
  return 0;
}
