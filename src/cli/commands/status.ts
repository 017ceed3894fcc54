import path from 'node:path';
import type { Argv } from 'yargs';
import { UsageError } from '../../errors.js';
import { isJobState, JOB_STATES, type JobState } from '../../jobs/states.js';
import { runCsvChunks } from '../../report/csv.js';
import { idLines, jsonLines, statusJsonChunks } from '../../report/documents.js';
import { formatStateListing, formatStatusText, statusMarkdown, type StatusSummary } from '../../report/status.js';
import { jobsInStates, runJobs, storedBudget, summarize } from '../../runner/reports.js';
import type { ListingLedger } from '../../store/index.js';
import { manifestPaths, withLedgerToRead } from '../../lib/ledger.js';
import { commaList } from '../../lib/options.js';
import { resolveFormat, withFormatOption, withSharedOptions, type OutputFormat } from '../options.js';
import { useColor, writeStdout, writeStdoutChunks } from '../output.js';

export function builder(y: Argv) {
  return withFormatOption(withSharedOptions(y), ['table', 'json', 'csv', 'md', 'ids', 'jsonl'], 'one job a row, as <name>.run.csv')
    .option('state', {
      type: 'string',
      describe: `list only jobs in these states, comma-separated (${JOB_STATES.join(', ')}); table adds their list to the summary`,
    })
    .positional('manifest', { type: 'string', demandOption: true });
}

type StatusArgs = Awaited<ReturnType<typeof builder>['argv']>;

export async function handler(args: StatusArgs): Promise<number> {
  const format = resolveFormat(args);
  const states = parseStates(args.state);
  if (states !== undefined && format === 'md') {
    throw new UsageError('--state lists jobs, and --format md is the summary for a ticket, without a list: use --format csv (or table, ids, jsonl, json) with --state');
  }
  const paths = manifestPaths(args.manifest, args.db);
  return withLedgerToRead(args.manifest, args.db, async (ledger) => {
    const summary = await summarize(ledger, await storedBudget(ledger));
    // estimate records the jobs and validate caches the catalogue, but nothing was sent: a
    // table of pending jobs would say less than this.
    if (summary.spentMicro === 0 && summary.counts.pending + summary.counts.skipped === Object.values(summary.counts).reduce((a, b) => a + b, 0)) {
      throw new UsageError(`nothing has been run for ${args.manifest} yet: the ledger ${paths.db} records no job sent (or pass --db PATH)`);
    }
    await print(ledger, summary, { format, states }, path.basename(paths.manifest));
    return 0;
  });
}

/** `--state failed,in_doubt` (or given twice): the states, each checked; undefined when not given. */
export function parseStates(given: string | string[] | undefined): JobState[] | undefined {
  if (given === undefined) return undefined;
  const names = commaList(given);
  const unknown = names.filter((name) => !isJobState(name));
  if (unknown.length > 0) {
    const what = unknown.map((name) => (name === '' ? 'an empty value' : JSON.stringify(name))).join(', ');
    throw new UsageError(`--state: expected job states, comma-separated, from ${JOB_STATES.join(', ')}; got ${what} (as in --state failed,in_doubt)`);
  }
  return [...new Set(names as JobState[])];
}

/** Every job of the listings comes from the ledger a window at a time; --state keeps those in its states. */
function print(
  ledger: ListingLedger,
  summary: StatusSummary,
  asked: { format: OutputFormat; states: JobState[] | undefined },
  title: string,
): Promise<void> {
  const { format, states } = asked;
  const steps = summary.steps !== undefined;
  switch (format) {
    case 'json':
      return writeStdoutChunks(statusJsonChunks(summary, runJobs(ledger, states)));
    case 'csv':
      return writeStdoutChunks(runCsvChunks(runJobs(ledger, states), steps));
    case 'ids':
      return writeStdoutChunks(idLines(runJobs(ledger, states)));
    case 'jsonl':
      return writeStdoutChunks(jsonLines(runJobs(ledger, states), steps));
    case 'md':
      return writeStdout(statusMarkdown(summary, title));
    case 'table':
      return printTable();
  }
  async function printTable(): Promise<void> {
    const color = useColor(process.stdout);
    const listing = states === undefined ? '' : `\n${formatStateListing(states, await jobsInStates(ledger, states), { color })}`;
    await writeStdout(`${formatStatusText(summary, { color })}${listing}`);
  }
}
