import { assertTransition, type JobState } from '../../../src/jobs/states.js';
import { blockedReason, type GraphLedger, type InputRef, type SendSelection } from '../../../src/store/ledger.js';
import { appendEvent, manifestOrder, picker, sender, toRow, type JobTest, type MemoryData, type MemoryJob, type Sync } from './data.js';

/** Every input is done (store/sqlite/selection.ts: READY_SQL). */
export const isReady = (data: MemoryData): JobTest => (job) => job.inputRefs.every((input) => data.jobs.get(input.from)?.state === 'done');

/** Steps of the listed jobs with inputs, a level at a time (store/sqlite/graph.ts: writeSteps); how many rows changed. */
export function writeSteps(data: MemoryData): number {
  const listed = [...data.jobs.values()].filter((job) => job.inManifest && job.inputRefs.length > 0);
  const withInputs = new Set(listed.map((job) => job.id));
  const steps = new Map<string, number>();
  for (let step = 2, found = true; found; step += 1) {
    const level = listed.filter((job) => !steps.has(job.id) && job.inputRefs.every((input) => (steps.get(input.from) ?? step) < step || !withInputs.has(input.from)));
    for (const job of level) steps.set(job.id, step);
    found = level.length > 0;
  }
  let written = 0;
  for (const [id, step] of steps) {
    const job = data.jobs.get(id)!;
    if (job.step !== step) written += 1;
    job.step = step;
  }
  return written;
}

/** The jobs that take other jobs' results (ledger.ts: GraphLedger; store/sqlite/graph.ts is the same in SQL). */
export function memoryGraph(data: () => MemoryData, nowIso: () => string): Sync<GraphLedger> {
  const move = (job: MemoryJob, to: JobState, reason: string | null, now: string): void => {
    assertTransition(job.id, job.state, to);
    const from = job.state;
    Object.assign(job, { state: to, lastError: reason, updatedAt: now });
    data().counters.jobsVersion += 1;
    appendEvent(data(), now, job.id, to === 'blocked' ? 'blocked' : 'unblocked', from, to, { reason, spentMicro: job.spentMicro });
  };
  /** Jobs that will not be done: by their own state (true), or waiting on such a job (false). */
  const waiting = (send: SendSelection | null): Map<string, boolean> => {
    const selected = send === null ? () => false : sender(send);
    const picked = send === null ? () => true : picker(send);
    const mayBeDone = (job: MemoryJob): boolean =>
      selected(job) ||
      ['submitting', 'submitted'].includes(job.state) ||
      (job.state === 'blocked' && job.inManifest && picked(job)) ||
      (send === null && ['pending', 'blocked'].includes(job.state));
    const jobs = [...data().jobs.values()];
    const found = new Map<string, boolean>();
    for (const id of new Set(jobs.flatMap((job) => job.inputRefs.map((input) => input.from)))) {
      const job = data().jobs.get(id);
      if (job !== undefined && job.state !== 'done' && !mayBeDone(job)) found.set(id, true);
    }
    // A job that would wait waits on its input, even one left out itself (store/sqlite/graph.ts says why).
    const own = (job: MemoryJob): boolean => !['pending', 'skipped', 'blocked'].includes(job.state);
    for (let grown = true; grown; ) {
      const more = jobs.filter((job) => job.state !== 'done' && found.get(job.id) !== false && (!found.has(job.id) || !own(job)) && job.inputRefs.some((input) => found.has(input.from)));
      for (const job of more) found.set(job.id, own(job));
      grown = more.length > 0;
    }
    return found;
  };

  return {
    readInputs: (after, limit) => {
      const listed = [...data().jobs.values()].filter((job) => job.inManifest);
      const refs: InputRef[] = listed.flatMap((job) =>
        job.inputRefs.map((input) => {
          const from = data().jobs.get(input.from);
          const parts = listed.filter((part) => part.parentId?.toLowerCase() === input.from.toLowerCase());
          const fromType = from?.inManifest === true ? from.type : (parts[0]?.type ?? null);
          const stepped = job.step !== null && job.step !== undefined;
          return { jobId: job.id, jobType: job.type, field: input.field, fromId: input.from, fromType, fromSplit: parts.length > 0, origin: input.origin, stepped };
        }),
      );
      const key = (ref: Pick<InputRef, 'jobId' | 'field'>): [string, string] => [ref.jobId, ref.field];
      const compare = (a: [string, string], b: [string, string]): number => (a[0] !== b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
      return refs
        .filter((ref) => after === undefined || compare(key(ref), key(after)) > 0)
        .sort((a, b) => compare(key(a), key(b)))
        .slice(0, limit);
    },
    dependentsReady: (upstreamId, send) => {
      const selected = sender(send);
      const ready = isReady(data());
      return manifestOrder(data())
        .filter((job) => job.inputRefs.some((input) => input.from === upstreamId) && selected(job) && ready(job))
        .map((job) => toRow(job));
    },
    settleBlocked: (send) => {
      const found = waiting(send);
      const now = nowIso();
      const listed = manifestOrder(data()).filter((job) => job.inManifest);
      let blocked = 0;
      for (const job of listed.filter((candidate) => candidate.state === 'pending' || candidate.state === 'skipped')) {
        const input = [...job.inputRefs].sort((a, b) => (a.field < b.field ? -1 : 1)).find((ref) => found.has(ref.from));
        if (input === undefined) continue;
        move(job, 'blocked', blockedReason(input.from, data().jobs.get(input.from)!, found.get(input.from) === false), now);
        blocked += 1;
      }
      const unblocking = listed.filter((job) => job.state === 'blocked' && !job.inputRefs.some((input) => found.has(input.from)));
      for (const job of unblocking) move(job, 'pending', null, now);
      return { blocked, unblocked: unblocking.length };
    },
    priceForSend: (id, price) => {
      const job = data().jobs.get(id);
      if (job === undefined || !['pending', 'skipped', 'blocked'].includes(job.state)) {
        throw new Error(`bug in mediabatch: job "${id}" cannot be priced for its send: it is ${job?.state ?? 'not in the ledger'} (only pending, skipped or blocked)`);
      }
      if (!Number.isSafeInteger(price.priceMicro) || price.priceMicro < 0) {
        throw new Error(`bug in mediabatch: job "${id}" was priced at ${price.priceMicro} µUSD, not a whole number of micro-dollars`);
      }
      const now = nowIso();
      const boundMicro = job.priceMicro;
      Object.assign(job, { priceMicro: price.priceMicro, priceSource: price.source, priceKey: price.priceKey, priceBound: false, updatedAt: now });
      data().counters.jobsVersion += 1;
      appendEvent(data(), now, id, 'repriced', job.state, job.state, { ...price, boundMicro });
    },
    inputsChanged: (limit) =>
      manifestOrder(data())
        .filter((job) => job.inManifest)
        .flatMap((job) =>
          [...job.inputRefs]
            .sort((a, b) => (a.field < b.field ? -1 : 1))
            .filter((input) => input.sentSha256 !== null && data().jobs.get(input.from)?.resultSha256 !== input.sentSha256)
            .map((input) => ({ id: job.id, state: job.state, field: input.field, fromId: input.from })),
        )
        .slice(0, limit),
  };
}
