import type { ChangeAnswer, ChangeOutcome, LedgerChange } from './changes.js';
import { commitChanges } from './changes.js';
import type { SqliteCore } from './core.js';

/**
 * Where a ledger's state changes are committed: on the caller's connection, or on a thread of
 * its own (thread-committer.ts). Either way with group commit: every change asked for in one
 * turn of the event loop joins one transaction, and each caller's promise settles only after
 * that transaction has committed. With synchronous=FULL each commit waits for the disk; shared
 * by every change in flight, that wait costs a run little.
 */
export interface Committer {
  commit<C extends LedgerChange>(change: C): Promise<ChangeAnswer<C>>;
  /** Waits for every change asked for so far; what it holds for changes may go until the next. */
  flush(): Promise<void>;
  /** Waits for every change asked for so far, then releases what the committer holds. */
  close(): Promise<void>;
}

interface Waiting {
  change: LedgerChange;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * The part every committer shares: changes are collected until the current turn of the event
 * loop ends, then handed to `apply` as one batch. `apply` resolves with one outcome per change,
 * or rejects when the whole batch was not written. `drained()` settles once every change asked
 * for so far has its answer.
 */
export function groupCommit(apply: (changes: LedgerChange[]) => Promise<ChangeOutcome[]>): {
  commit: Committer['commit'];
  drained: () => Promise<void>;
} {
  let waiting: Waiting[] = [];
  const inFlight = new Set<Promise<void>>();
  const commitWaiting = (): void => {
    const batch = waiting;
    waiting = [];
    const settled = apply(batch.map((w) => w.change)).then(
      (outcomes) =>
        batch.forEach((w, i) => {
          const outcome = outcomes[i];
          if (outcome?.ok) w.resolve(outcome.value);
          else w.reject(outcome === undefined ? new Error('bug in mediabatch: a ledger change had no answer') : outcome.error);
        }),
      (error: unknown) => batch.forEach((w) => w.reject(error)),
    );
    inFlight.add(settled);
    void settled.finally(() => inFlight.delete(settled));
  };
  const commit = <C extends LedgerChange>(change: C) =>
    new Promise<ChangeAnswer<C>>((resolve, reject) => {
      // setImmediate runs once the I/O callbacks of this turn are done: every answer that
      // arrived together is recorded together, and nobody waits on a timer.
      if (waiting.length === 0) setImmediate(commitWaiting);
      waiting.push({ change, resolve: resolve as (value: unknown) => void, reject });
    });
  const drained = async (): Promise<void> => {
    // Immediates run in the order they were set: the commit already scheduled goes first.
    if (waiting.length > 0) await new Promise((done) => setImmediate(done));
    await Promise.all(inFlight);
  };
  return { commit, drained };
}

/** Commits on the core's own connection: each batch blocks the event loop while it commits. */
export function inlineCommitter(core: SqliteCore): Committer {
  const { commit, drained } = groupCommit(async (changes) => commitChanges(core, changes));
  return { commit, flush: drained, close: drained };
}
