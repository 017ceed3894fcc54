import { PassThrough, Readable } from 'node:stream';
import type { JobQuery, JobRow, ListingLedger } from '../store/index.js';

/** Rows read from the ledger at a time: a few hundred KB however large the manifest. */
export const WINDOW_ROWS = 500;

/**
 * The ledger's jobs matching `query`, in manifest order, read a window at a time: every pass
 * over all jobs (sending, pricing's budget fit, reports, listings) goes through here, so none
 * holds more than a window. Rows changed behind the cursor are not seen again.
 */
export async function* jobWindows(
  ledger: Pick<ListingLedger, 'readJobs'>,
  query: Omit<JobQuery, 'after' | 'limit'>,
  windowRows = WINDOW_ROWS,
): AsyncGenerator<JobRow> {
  // A cursor from the start: the ledger walks manifest order for a window (JobQuery.after).
  let after: JobQuery['after'] = { index: Number.MIN_SAFE_INTEGER, id: '' };
  for (;;) {
    const rows = await ledger.readJobs({ ...query, after, limit: windowRows });
    yield* rows;
    const last = rows.at(-1);
    if (last === undefined || rows.length < windowRows) return;
    after = { index: last.manifestIndex, id: last.id };
  }
}

/**
 * One walk read by several readers at once (the files a run or an estimate ends with), instead
 * of a walk each: at a million jobs a walk of the ledger costs seconds. Each reader gets every
 * item in order. Node's pipe to several destinations keeps them in step, the walk waiting for
 * the slowest, so a few windows at most are held. A reader that fails is unpiped and the others
 * go on; a failing walk fails every reader. Settles once every reader has, with the first
 * failure if any (nothing is left writing behind it).
 */
export async function readTogether<T>(items: AsyncIterable<T>, readers: readonly ((items: AsyncIterable<T>) => Promise<void>)[]): Promise<void> {
  const walk = Readable.from(items, { highWaterMark: WINDOW_ROWS });
  const branches = readers.map(() => new PassThrough({ objectMode: true, highWaterMark: WINDOW_ROWS }));
  for (const branch of branches) walk.pipe(branch);
  walk.once('error', (error) => {
    for (const branch of branches) branch.destroy(error);
  });
  const settled = await Promise.allSettled(readers.map((read, i) => read(branches[i] as PassThrough)));
  walk.destroy();
  const failed = settled.find((result) => result.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}

export async function* mapRows<T, U>(rows: AsyncIterable<T>, map: (row: T) => U | Promise<U>): AsyncGenerator<U> {
  for await (const row of rows) yield await map(row);
}
