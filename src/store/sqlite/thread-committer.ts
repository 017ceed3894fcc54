import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { LocalIoError } from '../../errors.js';
import type { ChangeOutcome, LedgerChange } from './changes.js';
import { groupCommit, type Committer } from './group-commit.js';
import { fromSentError, type SentError } from './sent-error.js';

export type ThreadRequest = { seq: number; changes: LedgerChange[] } | { close: true };
/** An outcome as it crosses back: a failed change's error in a shape structured clone keeps. */
export type SentOutcome = { ok: true; value: unknown } | { ok: false; error: SentError };
export type ThreadReply = { seq: number; outcomes: SentOutcome[] } | { seq: number; failure: SentError };

const YOUNG_GENERATION_MB = 4;

interface Pending {
  resolve: (outcomes: ChangeOutcome[]) => void;
  reject: (error: unknown) => void;
}

/** One writer thread and the batches it has yet to answer. */
interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Asked to close: its exit is expected once it has answered everything. */
  leaving: boolean;
}

/**
 * Commits on a thread of its own (writer-thread.ts), with its own connection to the ledger
 * file. SQLite's work and the disk flush of each commit then overlap the requests in flight
 * instead of stopping the event loop that sends and answers them. The thread starts with the
 * first change (a run with nothing to send never starts it), keeps the process alive only while
 * a change is waiting for its answer, and goes once the committer is released (its heap and
 * connection with it); a later change starts another.
 */
export function threadCommitter(path: string, workerUrl: URL, beforeStart: () => void = () => undefined): Committer {
  let current: Thread | undefined;
  let stopped: LocalIoError | undefined;
  let seq = 0;

  const fail = (thread: Thread, error: LocalIoError): void => {
    stopped ??= error;
    for (const { reject } of thread.pending.values()) reject(stopped);
    thread.pending.clear();
  };
  const start = (): Thread => {
    // The thread's live heap is a few MB; left alone, V8 grows its young generation to 32 MB.
    const worker = new Worker(workerUrl, { workerData: { path }, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
    const thread: Thread = { worker, pending: new Map(), leaving: false };
    worker.on('message', (reply: ThreadReply) => {
      const waiting = thread.pending.get(reply.seq);
      thread.pending.delete(reply.seq);
      if (thread.pending.size === 0) worker.unref();
      if ('failure' in reply) waiting?.reject(fromSentError(reply.failure));
      else waiting?.resolve(reply.outcomes.map((o) => (o.ok ? o : { ok: false, error: fromSentError(o.error) })));
    });
    worker.on('error', (error) => fail(thread, stoppedError(path, error.message, error)));
    worker.on('exit', (code) => {
      if (!thread.leaving || thread.pending.size > 0) fail(thread, stoppedError(path, `it exited with code ${code}`));
    });
    return thread;
  };

  const { commit, drained } = groupCommit(
    (changes) =>
      new Promise<ChangeOutcome[]>((resolve, reject) => {
        if (stopped !== undefined) return reject(stopped);
        if (current === undefined) {
          try {
            beforeStart();
          } catch (error) {
            return reject(error);
          }
        }
        const thread = (current ??= start());
        seq += 1;
        thread.pending.set(seq, { resolve, reject });
        thread.worker.ref();
        thread.worker.postMessage({ seq, changes } satisfies ThreadRequest);
      }),
  );

  /** Waits for every change asked for so far, then lets the thread go. */
  const release = async (): Promise<void> => {
    await drained();
    const thread = current;
    if (thread === undefined || stopped !== undefined) return;
    // From here a new change starts a thread of its own; this one only has to close.
    current = undefined;
    thread.leaving = true;
    const exited = once(thread.worker, 'exit');
    thread.worker.ref();
    thread.worker.postMessage({ close: true } satisfies ThreadRequest);
    await exited;
  };
  return { commit, flush: release, close: release };
}

function stoppedError(path: string, why: string, cause?: unknown): LocalIoError {
  return new LocalIoError(`the ledger writer for ${path} stopped (${why}): nothing more can be recorded`, 'E_LEDGER_WRITE', cause);
}
