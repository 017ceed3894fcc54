import { IssueCollector } from '../manifest/errors.js';
import { checkGraph, type InputRef, type RefSite } from '../manifest/graph.js';
import { inlineIndexOf } from '../manifest/read.js';
import type { GraphLedger, ListingLedger, SendSelection } from '../store/index.js';
import type { RunEvent } from './context.js';
import { WINDOW_ROWS } from './windows.js';

type LedgerRef = InputRef & { origin: string };

/**
 * The manifest's references as the ledger recorded them, checked before any price call (the
 * manifest's own checker, manifest/graph.ts): every problem located at its field, all at once
 * (ManifestError, exit 2). Says whether any job takes another's result.
 */
export async function checkInputs(ledger: Pick<GraphLedger, 'readInputs'> & Pick<ListingLedger, 'getJob'>): Promise<boolean> {
  let any = false;
  async function* refs(): AsyncGenerator<LedgerRef> {
    for (let after: Pick<InputRef, 'jobId' | 'field'> | undefined; ; ) {
      const window = await ledger.readInputs(after, WINDOW_ROWS);
      // A job the ledger gave a step is in no cycle: its references are checked, not kept for the walk.
      for (const ref of window) yield { ...ref, fromType: ref.fromType ?? undefined, acyclic: ref.stepped };
      any ||= window.length > 0;
      const last = window.at(-1);
      if (last === undefined || window.length < WINDOW_ROWS) return;
      after = { jobId: last.jobId, field: last.field };
    }
  }
  const issues = new IssueCollector();
  // An inline job is named with its place in `jobs:`, as validate names it; looked up only for a problem.
  const locate = async (ref: InputRef): Promise<RefSite> => {
    const site = siteOf((ref as LedgerRef).origin);
    const job = await ledger.getJob(ref.jobId);
    const jobIndex = job === undefined ? undefined : inlineIndexOf(job.manifestIndex);
    return jobIndex === undefined ? site : { ...site, jobIndex };
  };
  issues.addAll((await checkGraph(refs(), locate)).issues);
  const error = issues.error();
  if (error !== undefined) throw error;
  return any;
}

/** `file:line:col` as the ledger stores an origin. */
function siteOf(origin: string): RefSite {
  const [, file = origin, line = '0', col = '0'] = /^(.*):(\d+):(\d+)$/.exec(origin) ?? [];
  return { file, line: Number(line), col: Number(col) };
}

/**
 * Jobs whose input will not be done by `send` (null: after a run, when nothing more is sent)
 * become blocked, and blocked jobs whose inputs now may be done pending again: an event each,
 * read back from the ledger's log (it says which), a window at a time.
 */
export async function settleBlocked(
  ledger: Pick<GraphLedger, 'settleBlocked'> & Pick<ListingLedger, 'lastEventId' | 'readEvents'>,
  send: SendSelection | null,
  emit: (event: RunEvent) => void,
): Promise<void> {
  let afterId = await ledger.lastEventId();
  const settled = await ledger.settleBlocked(send);
  for (let left = settled.blocked + settled.unblocked; left > 0; ) {
    const events = await ledger.readEvents({ afterId, limit: WINDOW_ROWS });
    for (const event of events) {
      const id = event.jobId ?? '';
      const reason = String((event.detail as { reason?: unknown } | null)?.reason ?? '');
      if (event.kind === 'blocked') emit({ kind: 'blocked', id, reason });
      if (event.kind === 'unblocked') emit({ kind: 'unblocked', id });
    }
    left -= events.filter((event) => event.kind === 'blocked' || event.kind === 'unblocked').length;
    afterId = events.at(-1)?.id ?? afterId;
    if (events.length < WINDOW_ROWS) return;
  }
}
