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

/**
 * Commits on a thread of its own (writer-thread.ts), with its own connection to the ledger
 * file. SQLite's work and the disk flush of each commit then overlap the requests in flight
 * instead of stopping the event loop that sends and answers them. The thread starts with the
 * first change (a run with nothing to send never starts it) and keeps the process alive only
 * while a change is waiting for its answer.
 */
export function threadCommitter(path: string, workerUrl: URL): Committer {
  let worker: Worker | undefined;
  let closing = false;
  let stopped: LocalIoError | undefined;
  let seq = 0;
  const pending = new Map<number, Pending>();

  const fail = (error: LocalIoError): void => {
    stopped ??= error;
    for (const { reject } of pending.values()) reject(stopped);
    pending.clear();
  };
  const start = (): Worker => {
    // The thread's live heap is a few MB; left alone, V8 grows its young generation to 32 MB.
    const started = new Worker(workerUrl, { workerData: { path }, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
    started.on('message', (reply: ThreadReply) => {
      const waiting = pending.get(reply.seq);
      pending.delete(reply.seq);
      if (pending.size === 0) started.unref();
      if ('failure' in reply) waiting?.reject(fromSentError(reply.failure));
      else waiting?.resolve(reply.outcomes.map((o) => (o.ok ? o : { ok: false, error: fromSentError(o.error) })));
    });
    started.on('error', (error) => fail(stoppedError(path, error.message, error)));
    started.on('exit', (code) => {
      if (!closing || pending.size > 0) fail(stoppedError(path, `it exited with code ${code}`));
    });
    return started;
  };

  const { commit, drained } = groupCommit(
    (changes) =>
      new Promise<ChangeOutcome[]>((resolve, reject) => {
        if (stopped !== undefined) return reject(stopped);
        worker ??= start();
        seq += 1;
        pending.set(seq, { resolve, reject });
        worker.ref();
        worker.postMessage({ seq, changes } satisfies ThreadRequest);
      }),
  );

  let closed: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    await drained();
    closing = true;
    if (worker === undefined || stopped !== undefined) return;
    const exited = new Promise((resolve) => worker?.once('exit', resolve));
    worker.ref();
    worker.postMessage({ close: true } satisfies ThreadRequest);
    await exited;
  };
  return { commit, close: () => (closed ??= close()) };
}

function stoppedError(path: string, why: string, cause?: unknown): LocalIoError {
  return new LocalIoError(`the ledger writer for ${path} stopped (${why}): nothing more can be recorded`, 'E_LEDGER_WRITE', cause);
}
