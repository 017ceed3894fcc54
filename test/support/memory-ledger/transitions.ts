import { assertTransition, type JobState } from '../../../src/jobs/states.js';
import { withinBudget } from '../../../src/money.js';
import type { SubmittedResult, TransitionLedger } from '../../../src/store/ledger.js';
import { appendEvent, manifestOrder, type MemoryData, type MemoryJob, type Sync } from './data.js';

const bug = (id: string, what: string): Error => new Error(`bug in mediabatch: job "${id}" ${what}`);

/**
 * Every state change of a job, its row and its event together, checked before anything is
 * written (ledger.ts says what each promises; store/sqlite/transitions.ts is the same in SQL).
 */
export function memoryTransitions(data: () => MemoryData, nowIso: () => string): Sync<TransitionLedger> {
  const move = (job: MemoryJob, to: JobState, kind: string, detail: object, change: Partial<MemoryJob> = {}): void => {
    assertTransition(job.id, job.state, to);
    const from = job.state;
    const now = nowIso();
    Object.assign(job, change, { state: to, issue: null, updatedAt: now });
    data().counters.jobsVersion += 1;
    appendEvent(data(), now, job.id, kind, from, to, { ...detail, spentMicro: job.spentMicro });
  };
  const find = (id: string, action: string): MemoryJob => {
    const job = data().jobs.get(id);
    if (job === undefined) throw bug(id, `is not in the ledger (${action})`);
    return job;
  };
  const load = (id: string, from: readonly JobState[], action: string): MemoryJob => {
    const job = find(id, action);
    if (!from.includes(job.state)) throw bug(id, `cannot be ${action} from ${job.state} (only from ${from.join(', ')})`);
    return job;
  };
  const note = (id: string, kind: string, lastError: string | null, detail: object): void => {
    const job = find(id, kind);
    // Only a job with a request id, whose result is still to come, can be left uncollected.
    if (job.state !== 'submitted') throw bug(id, `is ${job.state}, not submitted (${kind})`);
    const now = nowIso();
    const issue = kind === 'not_collected' || kind === 'status_unknown' ? kind : null;
    Object.assign(job, { lastError, issue, updatedAt: now });
    data().counters.jobsVersion += 1;
    appendEvent(data(), now, id, kind, job.state, job.state, detail);
  };

  return {
    recoverInterrupted: () => {
      const jobs = manifestOrder(data()).filter((job) => job.state === 'submitting');
      for (const job of jobs) move(job, 'in_doubt', 'recovered', { reason: 'crashed while submitting' }, { lastError: 'crashed while submitting: the service may have taken it' });
      return jobs.map((job) => job.id);
    },
    reserveForSubmit: (id, budgetMicro, allowFrom) => {
      const job = find(id, 'reserve');
      const from = job.state === 'failed' && !(job.retryable === true && job.refunded === true) ? 'failed_for_good' : job.state;
      if (!(allowFrom as readonly string[]).includes(from)) return 'wrong-state';
      const { priceMicro, spentMicro: carriedMicro } = job;
      if (priceMicro === null) throw bug(id, 'has no price; prices are set before anything is reserved');
      const spentBeforeMicro = [...data().jobs.values()].reduce((sum, other) => sum + other.spentMicro, 0);
      if (!withinBudget(spentBeforeMicro, priceMicro, budgetMicro)) return 'over-budget';
      const earlier = job.state === 'done' ? { earlierResult: { path: job.resultPath, sha256: job.resultSha256 } } : {};
      const detail = { priceMicro, carriedMicro, budgetMicro, spentTotalMicro: spentBeforeMicro + priceMicro, ...earlier };
      move(job, 'submitting', 'reserved', detail, {
        spentMicro: carriedMicro + priceMicro,
        carriedMicro,
        attempts: job.attempts + 1,
        requestId: null,
        lastError: null,
        retryable: null,
        refunded: null,
        submittedAt: null,
      });
      for (const input of job.inputRefs) input.sentSha256 = data().jobs.get(input.from)?.resultSha256 ?? null;
      return 'reserved';
    },
    markSubmitted: (id, requestId): SubmittedResult => {
      const job = load(id, ['submitting'], 'submitted');
      const holder = [...data().jobs.values()].find((other) => other.requestId === requestId && other.id !== id);
      if (holder !== undefined) {
        const lastError = `the service answered request id ${requestId}, which it had already given to job "${holder.id}": whether it took this job cannot be known`;
        move(job, 'in_doubt', 'request_id_conflict', { requestId, heldBy: holder.id }, { lastError });
        return { conflictWith: holder.id };
      }
      const followSeq = (data().counters.follow += 1);
      move(job, 'submitted', 'submitted', { requestId }, { requestId, submittedAt: nowIso(), followSeq });
      return 'submitted';
    },
    markNotTaken: (id, reason) => {
      const job = load(id, ['submitting'], 'released as not taken');
      move(job, 'pending', 'not_taken', { reason }, { spentMicro: job.carriedMicro, lastError: reason });
    },
    markRefused: (id, reason) => {
      const job = load(id, ['submitting'], 'refused');
      move(job, 'failed', 'refused', { reason }, { spentMicro: job.carriedMicro, lastError: reason, finishedAt: nowIso() });
    },
    markInDoubt: (id, reason) => move(load(id, ['submitting'], 'put in doubt'), 'in_doubt', 'in_doubt', { reason }, { lastError: reason }),
    markDone: (id, result) =>
      move(load(id, ['submitted'], 'done'), 'done', 'done', { ...result }, {
        resultPath: result.path,
        resultBytes: result.bytes,
        resultSha256: result.sha256,
        lastError: null,
        finishedAt: nowIso(),
      }),
    markFailedRemote: (id, failure) => {
      const job = load(id, ['submitted'], 'failed remotely');
      // A refund covers this attempt; what earlier in-doubt attempts may have cost stays counted.
      const spentMicro = failure.refunded ? job.carriedMicro : job.spentMicro;
      const { reason, retryable, refunded } = failure;
      move(job, 'failed', 'failed', { ...failure }, { spentMicro, lastError: reason, retryable, refunded, finishedAt: nowIso() });
    },
    markSkipped: (id, reason) => {
      const job = load(id, ['pending', 'skipped', 'in_doubt', 'failed', 'done'], 'skipped');
      if (job.state === 'pending') move(job, 'skipped', 'skipped', { reason }, { lastError: reason });
      else appendEvent(data(), nowIso(), id, 'not_sent', job.state, job.state, { reason });
    },
    noteUncollected: (id, issue, reason) => note(id, issue, reason, { reason }),
    noteStillRunning: (id) => note(id, 'still_running', null, {}),
    recordEvent: (jobId, kind, detail) => appendEvent(data(), nowIso(), jobId, kind, null, null, detail),
  };
}
