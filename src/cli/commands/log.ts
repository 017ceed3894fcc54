import type { Argv } from 'yargs';
import { escapeControlChars } from '../../control-chars.js';
import { UsageError } from '../../errors.js';
import { eventsCsv, eventsJsonl } from '../../report/events.js';
import type { EventRow, LedgerHandle, ListingLedger } from '../../store/index.js';
import { withLedgerToRead } from '../../lib/ledger.js';
import { withSharedOptions } from '../options.js';
import { stdoutOpen, writeStdout } from '../output.js';

const FORMATS = ['jsonl', 'csv'] as const;

/** Events read and printed at a time: the output streams, whatever the size of the log. */
const WINDOW = 2_000;

export function builder(y: Argv) {
  return withSharedOptions(y)
    .positional('manifest', { type: 'string', demandOption: true })
    .option('format', { choices: FORMATS, default: 'jsonl' as const, describe: 'one JSON document a line, or CSV with a header' })
    .option('job', { type: 'string', describe: "only this job's events" });
}

type LogArgs = Awaited<ReturnType<typeof builder>['argv']>;

export async function handler(args: LogArgs): Promise<number> {
  return withLedgerToRead(args.manifest, args.db, async (ledger) => {
    if (args.job !== undefined) await checkJob(ledger, args.job, args.manifest);
    let header = args.format === 'csv';
    for await (const window of eventWindows(ledger, args.job)) {
      if (!stdoutOpen()) break;
      await writeStdout(args.format === 'csv' ? eventsCsv(window, { header }) : eventsJsonl(window));
      header = false;
    }
    // A log with no event yet still gets its header, so a script reads the columns.
    if (header) await writeStdout(eventsCsv([], { header }));
    return 0;
  });
}

async function checkJob(
  ledger: Pick<ListingLedger, 'getJob'> & Pick<LedgerHandle, 'location'>,
  jobId: string,
  manifest: string,
): Promise<void> {
  if ((await ledger.getJob(jobId)) !== undefined) return;
  throw new UsageError(
    `--job ${escapeControlChars(JSON.stringify(jobId))}: the ledger ${ledger.location} holds no job with this id; ` +
      `\`mediabatch status ${manifest}\` lists the jobs`,
  );
}

/** The event log a window at a time, oldest first: never the whole of it in memory. */
async function* eventWindows(
  ledger: Pick<ListingLedger, 'readEvents'>,
  jobId: string | undefined,
): AsyncGenerator<EventRow[]> {
  for (let afterId = 0; ; ) {
    const window = await ledger.readEvents({ afterId, limit: WINDOW, jobId });
    if (window.length === 0) return;
    yield window;
    afterId = window[window.length - 1]?.id ?? afterId;
  }
}
