import type { ChangeAnswer, LedgerChange } from './changes.js';
import { commitChanges } from './changes.js';
import type { SqliteCore } from './core.js';

export interface GroupCommit {
  commit<C extends LedgerChange>(change: C): Promise<ChangeAnswer<C>>;
  /** Settles once every change asked for so far has its answer. */
  drained(): Promise<void>;
}

interface Waiting {
  change: LedgerChange;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit on the core's own connection: every change asked for in one turn of the event
 * loop joins one transaction, and each caller's promise settles only after that transaction has
 * committed. With synchronous=FULL each commit waits for the disk; shared by every change in
 * flight, that wait costs a run little. A batch blocks the event loop while it commits, which
 * keeps the order simple: nothing else runs between a reservation's commit and its answer.
 */
export function groupCommit(core: SqliteCore): GroupCommit {
  let waiting: Waiting[] = [];
  const commitWaiting = (): void => {
    const batch = waiting;
    waiting = [];
    let outcomes;
    try {
      outcomes = commitChanges(core, batch.map((w) => w.change));
    } catch (error) {
      for (const w of batch) w.reject(error);
      return;
    }
    batch.forEach((w, i) => {
      const outcome = outcomes[i];
      if (outcome?.ok) w.resolve(outcome.value);
      else w.reject(outcome === undefined ? new Error('bug in mediabatch: a ledger change had no answer') : outcome.error);
    });
  };
  return {
    commit: <C extends LedgerChange>(change: C) =>
      new Promise<ChangeAnswer<C>>((resolve, reject) => {
        // setImmediate runs once the I/O callbacks of this turn are done: every answer that
        // arrived together is recorded together, and nobody waits on a timer.
        if (waiting.length === 0) setImmediate(commitWaiting);
        waiting.push({ change, resolve: resolve as (value: unknown) => void, reject });
      }),
    // Immediates run in the order they were set: the commit already scheduled goes first.
    drained: async () => {
      while (waiting.length > 0) await new Promise((done) => setImmediate(done));
    },
  };
}
