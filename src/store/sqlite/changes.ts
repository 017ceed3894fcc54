import { LocalIoError } from '../../errors.js';
import type { MicroUsd } from '../../money.js';
import type { CollectIssue, DeliveryRecord, RemoteFailure, ReservableState, ReserveResult, StoredResult, SubmittedResult } from '../ledger.js';
import type { SqliteCore } from './core.js';

/**
 * The state changes a run makes while requests are in flight, as messages: what group commit
 * collects. One case per Ledger method.
 */
export type LedgerChange =
  | { kind: 'reserve'; jobId: string; budgetMicro: MicroUsd | null; allowFrom: readonly ReservableState[] }
  | { kind: 'submitted'; jobId: string; requestId: string }
  | { kind: 'not-taken'; jobId: string; reason: string }
  | { kind: 'refused'; jobId: string; reason: string }
  | { kind: 'in-doubt'; jobId: string; reason: string }
  | { kind: 'done'; jobId: string; result: StoredResult }
  | { kind: 'failed-remote'; jobId: string; failure: RemoteFailure }
  | { kind: 'skipped'; jobId: string; reason: string }
  | { kind: 'uncollected'; jobId: string; issue: CollectIssue; reason: string }
  | { kind: 'still-running'; jobId: string }
  | { kind: 'event'; jobId: string | null; event: string; detail: unknown }
  | { kind: 'webhook-run'; jobId: string; runId: number }
  | { kind: 'delivery'; jobId: string | null; delivery: DeliveryRecord };

/** What each change answers. */
export interface ChangeAnswers {
  reserve: ReserveResult;
  submitted: SubmittedResult;
  'not-taken': void;
  refused: void;
  'in-doubt': void;
  done: void;
  'failed-remote': void;
  skipped: void;
  uncollected: void;
  'still-running': void;
  event: void;
  'webhook-run': void;
  delivery: boolean;
}

export type ChangeAnswer<C extends LedgerChange> = ChangeAnswers[C['kind']];

/** How one change ended. */
export type ChangeOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Applies one change to the core, inside whatever transaction is open. */
export function applyChange(core: SqliteCore, change: LedgerChange): ChangeAnswers[LedgerChange['kind']] {
  switch (change.kind) {
    case 'reserve':
      return core.reserveForSubmit(change.jobId, change.budgetMicro, change.allowFrom);
    case 'submitted':
      return core.markSubmitted(change.jobId, change.requestId);
    case 'not-taken':
      return core.markNotTaken(change.jobId, change.reason);
    case 'refused':
      return core.markRefused(change.jobId, change.reason);
    case 'in-doubt':
      return core.markInDoubt(change.jobId, change.reason);
    case 'done':
      return core.markDone(change.jobId, change.result);
    case 'failed-remote':
      return core.markFailedRemote(change.jobId, change.failure);
    case 'skipped':
      return core.markSkipped(change.jobId, change.reason);
    case 'uncollected':
      return core.noteUncollected(change.jobId, change.issue, change.reason);
    case 'still-running':
      return core.noteStillRunning(change.jobId);
    case 'event':
      return core.recordEvent(change.jobId, change.event, change.detail);
    case 'webhook-run':
      return core.noteWebhookRun(change.jobId, change.runId);
    case 'delivery':
      return core.recordDelivery(change.delivery);
  }
}

/**
 * Applies `changes` to `core` in one IMMEDIATE transaction. Each change is its own savepoint
 * inside it: one that throws is undone alone and reported to its caller, the others still
 * commit. When the transaction itself fails (disk full, I/O error, locked too long, the file
 * gone from its path), nothing in it was written and this throws the LocalIoError to give every
 * caller.
 */
export function commitChanges(core: SqliteCore, changes: readonly LedgerChange[]): ChangeOutcome[] {
  const outcomes: ChangeOutcome[] = [];
  try {
    // A file deleted or replaced under the run: record nothing more where nobody will find it.
    core.assertInPlace();
    core.batch(() => {
      for (const change of changes) {
        try {
          outcomes.push({ ok: true, value: applyChange(core, change) });
        } catch (error) {
          outcomes.push({ ok: false, error });
        }
      }
    });
  } catch (error) {
    if (error instanceof LocalIoError) throw error;
    throw new LocalIoError(`cannot write the ledger ${core.path}: ${(error as Error).message}`, 'E_LEDGER_WRITE', error);
  }
  return outcomes;
}
