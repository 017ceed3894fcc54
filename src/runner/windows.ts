import type { JobQuery, JobRow, Ledger } from '../store/index.js';

/** Rows read from the ledger at a time: a few hundred KB however large the manifest. */
export const WINDOW_ROWS = 500;

/**
 * The ledger's jobs matching `query`, in manifest order, read a window at a time: every pass
 * over all jobs (sending, pricing's budget fit, reports, listings) goes through here, so none
 * holds more than a window. Rows changed behind the cursor are not seen again.
 */
export async function* jobWindows(ledger: Ledger, query: Omit<JobQuery, 'after' | 'limit'>, windowRows = WINDOW_ROWS): AsyncGenerator<JobRow> {
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
