import type { EventRow, ListingLedger } from '../../src/store/index.js';

/**
 * A job's events, or (null) the run-level ones, oldest first: the log read whole through
 * `readEvents`' windows, as only tests need it.
 */
export async function eventsFor(ledger: Pick<ListingLedger, 'readEvents'>, jobId: string | null): Promise<EventRow[]> {
  const events: EventRow[] = [];
  for (let afterId = 0; ; ) {
    const window = await ledger.readEvents({ afterId, limit: 1000, jobId: jobId ?? undefined });
    if (window.length === 0) return events;
    events.push(...window.filter((event) => event.jobId === jobId));
    afterId = window[window.length - 1]?.id ?? afterId;
  }
}
