import { spawn } from 'node:child_process';
import type { Argv } from 'yargs';
import { UsageError } from '../../errors.js';
import { formatCount } from '../../report/text.js';
import { writeReviewPage } from '../../runner/index.js';
import { storedBudget } from '../../runner/reports.js';
import type { CommandContext } from '../app.js';
import { manifestPaths, withLedgerToRead } from '../../lib/ledger.js';
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
  const jobs = await withLedgerToRead(args.manifest, args.db, async (ledger) => {
    const count = Object.values(await ledger.countsByState('report')).reduce((sum, n) => sum + n, 0);
    if (count === 0) {
      throw new UsageError(`nothing has been run for ${args.manifest} yet: the ledger ${paths.db} records no job (or pass --db PATH)`);
    }
    await writeReviewPage(ledger, paths.reportHtml, { manifest: paths.manifest, budgetMicro: await storedBudget(ledger), generatedAt: new Date(clock.nowMs()) });
    return count;
  });
  // The page is written whatever the opener does: a failure to show it is said, not an error.
  const notOpened = args.open ? await openFile(paths.reportHtml) : undefined;
  if (notOpened !== undefined) logLine(`mediabatch: could not open the page (${notOpened}); open it in a browser: ${paths.reportHtml}`);
  if (args.json) await writeJsonDocument({ page: paths.reportHtml, jobs, opened: args.open && notOpened === undefined });
  else await writeStdout(`wrote ${paths.reportHtml} (${formatCount(jobs)} job${jobs === 1 ? '' : 's'})`);
  return 0;
}

/** How long an opener may take to fail before it is taken to have worked and left to run. */
const OPENER_FAILS_WITHIN_MS = 1500;

/** The system's own way to open a file with its default program. */
function opener(file: string): { command: string; args: string[] } {
  if (process.platform === 'darwin') return { command: 'open', args: [file] };
  // `start` is a cmd built-in; its first quoted argument is a window title, hence the empty one.
  if (process.platform === 'win32') return { command: 'cmd', args: ['/c', 'start', '""', `"${file}"`] };
  return { command: 'xdg-open', args: [file] };
}

/**
 * Opens `file` with the platform's opener (xdg-open, open, start), detached so it outlives this
 * process. Resolves to undefined once it started (and did not fail at once), else to why not.
 */
export function openFile(file: string): Promise<string | undefined> {
  const { command, args } = opener(file);
  return new Promise((resolve) => {
    const child = spawn(command, args, { detached: true, stdio: 'ignore', windowsVerbatimArguments: process.platform === 'win32' });
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    // Only the first word counts; the listeners stay, so a late event is never an unhandled one.
    const done = (reason: string | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.unref();
      resolve(reason);
    };
    child.on('error', (error: NodeJS.ErrnoException) => done(`${command}: ${error.code === 'ENOENT' ? 'not found' : error.message}`));
    child.once('spawn', () => {
      timer = setTimeout(() => done(undefined), OPENER_FAILS_WITHIN_MS);
    });
    child.once('exit', (code, signal) => {
      if (code === 0) done(undefined);
      else done(`${command} ended with ${code === null ? `signal ${signal}` : `exit code ${code}`}`);
    });
  });
}
