import { LocalIoError } from '../errors.js';
import type { Ledger } from '../store/index.js';

const FLUSH_WINDOW_MS = 1;

interface QueuedOp {
  op: (ledger: Ledger) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for the ledger. State changes asked for in the same turn of the event loop are
 * written in one transaction, and each caller's promise settles only after that transaction
 * has committed. With synchronous=FULL every commit waits for the disk, so one commit per
 * change would cap a run at a few hundred jobs a second; grouped, the cost is shared by
 * every submit in flight while the ordering guarantee stays the same: a caller that awaits
 * `run(reserve)` knows its `submitting` row is on disk before it sends anything.
 */
export class CommitQueue {
  readonly #ledger: Ledger;
  #queued: QueuedOp[] = [];
  #scheduled = false;

  constructor(ledger: Ledger) {
    this.#ledger = ledger;
  }

  run<T>(op: (ledger: Ledger) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queued.push({ op, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        // A millisecond's wait lets the other workers' changes join this commit; it costs each
        // submit about that much and saves a disk flush for every change that joins.
        setTimeout(() => this.#flush(), FLUSH_WINDOW_MS);
      }
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const ops = this.#queued;
    this.#queued = [];
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      this.#ledger.batch(() => {
        for (const { op } of ops) {
          // Each ledger call is its own savepoint inside the batch: one that throws is undone
          // alone and reported to its caller; the others still commit.
          try {
            outcomes.push({ ok: true, value: op(this.#ledger) });
          } catch (error) {
            outcomes.push({ ok: false, value: error });
          }
        }
      });
    } catch (error) {
      // The transaction itself failed (disk full, I/O error, file locked too long): nothing in
      // it was written, and the run cannot go on safely without its ledger.
      const failure =
        error instanceof LocalIoError
          ? error
          : new LocalIoError(`cannot write the ledger ${this.#ledger.path}: ${(error as Error).message}`, 'E_LEDGER_WRITE', error);
      for (const { reject } of ops) reject(failure);
      return;
    }
    ops.forEach(({ resolve, reject }, i) => {
      const outcome = outcomes[i];
      if (outcome?.ok) resolve(outcome.value);
      else reject(outcome?.value);
    });
  }
}
