/**
 * Job states and the only transitions between them (docs/states-and-money.md).
 * The table is the single source of truth: the ledger asks it before every state change, so a
 * runner that tries anything else fails loudly instead of corrupting what was paid for.
 */

export const JOB_STATES = [
  'pending', 'submitting', 'submitted', 'done', 'failed', 'in_doubt', 'skipped', 'blocked',
] as const;

export type JobState = (typeof JOB_STATES)[number];
/** Alias kept short for callers that say "state". */
export type State = JobState;

/** Where a run leaves a job for good: nothing more happens to it unless a person or a later run acts. */
export const SETTLED_STATES: ReadonlySet<JobState> = new Set(['done', 'failed', 'in_doubt', 'skipped', 'blocked']);

const ALLOWED: Readonly<Record<JobState, readonly JobState[]>> = {
  pending: ['submitting', 'skipped', 'blocked'],
  // A skipped job is sent by a later run straight from where it is.
  skipped: ['submitting', 'blocked'],
  // A job that takes another's result, whose input failed or was left out: a run that may send
  // the input again (--retries, --redo) makes it pending; nothing is reserved while it waits.
  blocked: ['pending'],
  // → pending: provably not taken (429, 503, refused connection), the reservation is released.
  // → failed: refused by the service. → in_doubt: may have been taken, nobody can say.
  submitting: ['submitted', 'pending', 'failed', 'in_doubt'],
  // → submitted: a note on a paid result still to collect. → failed: ended in error at the service.
  submitted: ['done', 'failed', 'submitted'],
  // Only --resubmit-in-doubt sends it again; nothing moves it automatically.
  in_doubt: ['submitting'],
  // Sent again only when the service called the failure retryable and refunded it (the ledger checks).
  failed: ['submitting'],
  // Only `run --redo` sends a finished job again, on purpose: the ledger reserves from `done` only
  // when the caller names it among the states it sends from, and the earlier result is kept.
  done: ['submitting'],
};

export function isJobState(value: string): value is JobState {
  return (JOB_STATES as readonly string[]).includes(value);
}

export function canTransition(from: JobState, to: JobState): boolean {
  return ALLOWED[from].includes(to);
}

/** Throws when `from → to` is not in the table: the caller has a bug, not the user. */
export function assertTransition(jobId: string, from: JobState, to: JobState): void {
  if (canTransition(from, to)) return;
  throw new Error(
    `bug in mediabatch: job "${jobId}" cannot go from ${from} to ${to} (allowed from ${from}: ${
      ALLOWED[from].join(', ') || 'nothing'
    })`,
  );
}
