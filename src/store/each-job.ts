import type { JobCursor, JobRow, Ledger } from './ledger.js';

/** Rows per window when a caller does not say: a few hundred kilobytes of rows at a time. */
export const JOB_WINDOW_ROWS = 1000;

/**
 * Every job of the ledger in manifest order, read `windowRows` at a time through `readJobs`: a
 * million jobs pass through while memory holds one window.
 */
export async function* eachJob(ledger: Pick<Ledger, 'readJobs'>, windowRows = JOB_WINDOW_ROWS): AsyncGenerator<JobRow> {
  let after: JobCursor | undefined;
  for (;;) {
    const rows = await ledger.readJobs({ after, limit: windowRows });
    yield* rows;
    const last = rows.at(-1);
    if (last === undefined || rows.length < windowRows) return;
    after = { manifestIndex: last.manifestIndex, id: last.id };
  }
}
