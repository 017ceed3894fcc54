import { progressOf, type StoreContext } from './context.js';
import type { CollectIssue } from '../ledger.js';

/**
 * Notes on a paid job still `submitted` after a run asked about it (see CollectIssue). The
 * reason is the row's last_error; the kind is the note's event.
 */
export interface CollectNotes {
  /** submitted → submitted, `reason` as last_error and an event of kind `issue`. */
  noteUncollected(id: string, issue: CollectIssue, reason: string): void;
  /** submitted → submitted: asked, and still running at the service; an earlier note is cleared. */
  noteStillRunning(id: string): void;
}

export function createCollectNotes(ctx: StoreContext): CollectNotes {
  const note = (id: string, kind: string, lastError: string | null, detail: object): void => {
    const row = ctx.getRawJob(id);
    if (row === undefined) throw new Error(`bug in mediabatch: job "${id}" is not in the ledger (${kind})`);
    // Only a job with a request id, whose result is still to come, can be left uncollected.
    if (row.state !== 'submitted') throw new Error(`bug in mediabatch: job "${id}" is ${row.state}, not submitted (${kind})`);
    const now = ctx.nowIso();
    if (!ctx.writeProgress(id, row.state, { ...progressOf(row), lastError }, now)) {
      throw new Error(`bug in mediabatch: job "${id}" changed state under us (${kind})`);
    }
    ctx.insertEvent(id, kind, row.state, row.state, detail, now);
  };
  const run = ctx.db.transaction(note);
  return {
    noteUncollected: (id, issue, reason) => run(id, issue, reason, { reason }),
    noteStillRunning: (id) => run(id, 'still_running', null, {}),
  };
}
