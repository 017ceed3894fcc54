import { LocalIoError } from '../../errors.js';
import type { Ledger } from './ledger.js';

/** The ledger changes a run makes while requests are in flight. */
export type WriteMethods = Pick<
  Ledger,
  | 'reserveForSubmit'
  | 'markSubmitted'
  | 'markNotTaken'
  | 'markRefused'
  | 'markInDoubt'
  | 'markDone'
  | 'markFailedRemote'
  | 'markSkipped'
  | 'noteUncollected'
  | 'noteStillRunning'
  | 'recordEvent'
>;
export type WriteMethod = keyof WriteMethods;

export interface WriteCall {
  method: WriteMethod;
  args: unknown[];
}

/** How one call ended, in a shape that crosses a thread boundary (structured clone). */
export type WriteOutcome = { ok: true; value: unknown } | { ok: false; error: SentError };

export interface SentError {
  name: string;
  message: string;
  code?: string | undefined;
  stack?: string | undefined;
}

/**
 * Group commit for the ledger. Every call made in one turn of the event loop joins one
 * transaction, and each caller's promise settles only after that transaction has committed:
 * a caller that awaits `write('reserveForSubmit', …)` knows its `submitting` row is on disk
 * before it sends anything. With synchronous=FULL each commit waits for the disk; shared by
 * every change in flight, that wait costs a run little.
 */
export interface LedgerWriter {
  write<M extends WriteMethod>(method: M, ...args: Parameters<WriteMethods[M]>): Promise<ReturnType<WriteMethods[M]>>;
  /** Waits for every write asked for so far, then releases what the writer holds. */
  close(): Promise<void>;
}

/**
 * Applies `calls` to `ledger` in one IMMEDIATE transaction. Each ledger call is its own
 * savepoint inside it: one that throws is undone alone and reported to its caller, the others
 * still commit. When the transaction itself fails (disk full, I/O error, locked too long, the
 * file gone from its path), nothing in it was written and this throws the LocalIoError to give
 * every caller.
 */
export function commitCalls(ledger: Ledger, calls: readonly WriteCall[]): WriteOutcome[] {
  const outcomes: WriteOutcome[] = [];
  try {
    // A file deleted or replaced under the run: record nothing more where nobody will find it.
    ledger.assertInPlace();
    ledger.batch(() => {
      for (const { method, args } of calls) {
        try {
          const apply = ledger[method] as (...a: unknown[]) => unknown;
          outcomes.push({ ok: true, value: apply(...args) });
        } catch (error) {
          outcomes.push({ ok: false, error: toSentError(error) });
        }
      }
    });
  } catch (error) {
    if (error instanceof LocalIoError) throw error;
    throw new LocalIoError(`cannot write the ledger ${ledger.path}: ${(error as Error).message}`, 'E_LEDGER_WRITE', error);
  }
  return outcomes;
}

export function toSentError(error: unknown): SentError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const code = (error as { code?: unknown }).code;
  return { name: error.name, message: error.message, code: typeof code === 'string' ? code : undefined, stack: error.stack };
}

/** The error a caller sees: a LocalIoError stays one (exit 4, its message); anything else is a bug. */
export function fromSentError(sent: SentError): Error {
  if (sent.name === 'LocalIoError') return new LocalIoError(sent.message, sent.code);
  const error = new Error(sent.message);
  if (sent.stack !== undefined) error.stack = sent.stack;
  return error;
}

interface Waiting {
  call: WriteCall;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * The part every writer shares: calls are collected until the current turn of the event loop
 * ends, then handed to `apply` as one batch. `apply` resolves with one outcome per call, or
 * rejects when the whole batch was not written. `drained()` settles once every call asked for
 * so far has its answer.
 */
export function groupedWrites(apply: (calls: WriteCall[]) => Promise<WriteOutcome[]>): {
  write: LedgerWriter['write'];
  drained: () => Promise<void>;
} {
  let waiting: Waiting[] = [];
  const inFlight = new Set<Promise<void>>();
  const flush = (): void => {
    const batch = waiting;
    waiting = [];
    const settled = apply(batch.map((w) => w.call)).then(
      (outcomes) =>
        batch.forEach((w, i) => {
          const outcome = outcomes[i];
          if (outcome?.ok) w.resolve(outcome.value);
          else w.reject(outcome === undefined ? new Error('bug in mediabatch: a ledger write had no answer') : fromSentError(outcome.error));
        }),
      (error: unknown) => batch.forEach((w) => w.reject(error)),
    );
    inFlight.add(settled);
    void settled.finally(() => inFlight.delete(settled));
  };
  const write = <M extends WriteMethod>(method: M, ...args: Parameters<WriteMethods[M]>) =>
    new Promise<ReturnType<WriteMethods[M]>>((resolve, reject) => {
      // setImmediate runs once the I/O callbacks of this turn are done: every answer that
      // arrived together is recorded together, and nobody waits on a timer.
      if (waiting.length === 0) setImmediate(flush);
      waiting.push({ call: { method, args }, resolve: resolve as (value: unknown) => void, reject });
    });
  const drained = async (): Promise<void> => {
    // Immediates run in the order they were set: the flush already scheduled goes first.
    if (waiting.length > 0) await new Promise((done) => setImmediate(done));
    await Promise.all(inFlight);
  };
  return { write, drained };
}

/** A writer on this thread's own connection: each batch blocks the event loop while it commits. */
export function inlineWriter(ledger: Ledger): LedgerWriter {
  const { write, drained } = groupedWrites(async (calls) => commitCalls(ledger, calls));
  return { write, close: drained };
}
