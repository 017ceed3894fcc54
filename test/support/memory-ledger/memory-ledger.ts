import { holderIsAlive, LedgerLockedError, type CachedPrice, type Ledger, type LedgerIngest, type LockHolder } from '../../../src/store/ledger.js';
import { appendEvent, emptyData, toEvent, toRow, type MemoryData } from './data.js';
import { memoryGraph } from './graph.js';
import { memoryIngest } from './ingest.js';
import * as jobs from './jobs.js';
import { memoryTransitions } from './transitions.js';

/** A ledger held in memory; `reopen` gives another handle on the same jobs, as a second process opens a file. */
export interface MemoryLedger extends Ledger {
  reopen(options?: MemoryLedgerOptions): MemoryLedger;
}

export interface MemoryLedgerOptions {
  /** Reads only, as `status` opens a ledger: every change is refused as a bug. */
  readonly?: boolean;
  /** Epoch milliseconds; tests pass a clock to age caches. */
  nowMs?: () => number;
}

/** What every handle on one memory ledger shares. */
interface Shared {
  data: MemoryData;
  /** An ingest is open: until it ends, nothing else may change the ledger. */
  ingesting: boolean;
}

const LOCATION = 'the in-memory ledger';

/**
 * A new, empty ledger that lives as long as its handles: the same promises as the SQLite ledger
 * (the contract suite checks both), for tests about planning, pricing and the runner's
 * decisions, where a file adds nothing. Nothing survives the process; `copyTo` is refused.
 */
export function openMemoryLedger(options: MemoryLedgerOptions = {}): MemoryLedger {
  return memoryHandle({ data: emptyData(), ingesting: false }, options);
}

function memoryHandle(shared: Shared, options: MemoryLedgerOptions): MemoryLedger {
  const readonly = options.readonly ?? false;
  const nowMs = options.nowMs ?? Date.now;
  const nowIso = (): string => new Date(nowMs()).toISOString();
  // This handle's own ingest reads what it wrote so far, as a connection inside its transaction does.
  let draft: MemoryData | undefined;
  const data = (): MemoryData => draft ?? shared.data;
  let held: LockHolder | undefined;

  /** Every answer is already applied when its promise settles: there is nothing to wait for. */
  const now = <T>(fn: () => T): Promise<T> => {
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(error);
    }
  };
  const write = <T>(what: string, fn: () => T): Promise<T> => {
    if (readonly) return Promise.reject(new Error(`bug in mediabatch: ${what} on ${LOCATION}, which was opened read-only`));
    if (shared.ingesting) return Promise.reject(new Error(`bug in mediabatch: ${what} on ${LOCATION} while an ingest is open`));
    return now(fn);
  };
  const moves = memoryTransitions(data, nowIso);
  const graph = memoryGraph(data, nowIso);
  const change = <K extends keyof typeof moves>(name: K): Ledger[K] =>
    ((...args: unknown[]) => write(name, () => (moves[name] as (...a: unknown[]) => unknown)(...args))) as Ledger[K];

  const beginIngest = (): LedgerIngest => {
    const session = memoryIngest(shared.data, nowIso, (committed) => {
      if (committed !== undefined) shared.data = committed;
      shared.ingesting = false;
      draft = undefined;
    });
    shared.ingesting = true;
    draft = session.draft;
    const call = <A extends unknown[], R>(fn: (...args: A) => R) => (...args: A): Promise<R> => now(() => fn(...args));
    return { keep: call(session.keep), claim: call(session.claim), put: call(session.put), putUnitFiles: call(session.putUnitFiles), commit: call(session.commit), rollback: call(session.rollback) };
  };

  const acquireRunLock = (holder: LockHolder): void => {
    const current = data().lock;
    if (current !== undefined) {
      if (holderIsAlive(current, holder.host)) {
        const { pid, host, command, startedAt } = current;
        throw new LedgerLockedError(`${LOCATION} is in use by mediabatch pid ${pid} on ${host} since ${startedAt} (${command}): wait for it to finish or stop it`, { pid, host, command });
      }
      appendEvent(data(), nowIso(), null, 'lock_taken_over', null, null, { deadPid: current.pid, host: current.host, since: current.startedAt, command: current.command });
    }
    data().lock = { ...holder, startedAt: nowIso() };
    appendEvent(data(), nowIso(), null, 'lock_acquired', null, null, { pid: holder.pid, host: holder.host, command: holder.command });
    held = holder;
  };
  const releaseRunLock = (): void => {
    const lock = data().lock;
    if (held !== undefined && lock?.pid === held.pid && lock.host === held.host) data().lock = undefined;
    held = undefined;
  };

  return {
    location: LOCATION,
    readonly,
    reopen: (reopened = {}) => memoryHandle(shared, reopened),
    beginIngest: () => write('beginIngest', beginIngest),
    units: () => now(() => [...data().units.values()].sort((a, b) => a.position - b.position).map((unit) => ({ ...unit }))),
    unitFiles: (unitKey, afterPath, limit) =>
      now(() =>
        [...(data().unitFiles.get(unitKey) ?? [])]
          .filter(([path]) => path > afterPath)
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .slice(0, limit)
          .map(([path, stamp]) => ({ path, stamp })),
      ),

    getJob: (id) => now(() => {
      const job = data().jobs.get(id);
      return job === undefined ? undefined : toRow(job);
    }),
    readJobs: (query) => now(() => jobs.readJobs(data(), query)),
    countJobs: (query) => now(() => jobs.countJobs(data(), query)),
    readFollowing: (afterSeq, limit) => now(() => jobs.readFollowing(data(), afterSeq, limit)),
    readParts: (parentId) => now(() => jobs.readParts(data(), parentId)),
    splitsDone: (afterId, limit) => now(() => jobs.splitsDone(data(), afterId, limit)),
    countsByState: (scope) => now(() => jobs.countsByState(data(), scope)),
    jobsVersion: () => now(() => data().counters.jobsVersion),
    lastEventId: () => now(() => data().events.length),
    readEvents: ({ afterId, limit, jobId }) =>
      now(() => {
        if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`bug in mediabatch: a window of ${limit} events was asked for`);
        const after = data().events.slice(afterId);
        return (jobId === undefined ? after : after.filter((event) => event.jobId === jobId)).slice(0, limit).map(toEvent);
      }),

    priceGroups: (send) => now(() => jobs.priceGroups(data(), send)),
    applyPrices: (prices, send) => write('applyPrices', () => jobs.applyPrices(data(), prices, send, nowIso())),
    costRows: (send, only) => now(() => jobs.costRows(data(), send, only)),
    skipAfter: (after, send, reason) => write('skipAfter', () => jobs.skipAfter(data(), after, send, reason, nowIso())),
    unmatchedPicks: (pick) => now(() => jobs.unmatchedPicks(data(), pick)),
    spentMicro: () => now(() => jobs.spentMicro(data())),
    getPrices: (maxAgeMs) =>
      now(() => {
        const fresh = new Map<string, CachedPrice>();
        for (const [key, { priceUsd, source, atMs }] of data().prices) if (nowMs() - atMs <= maxAgeMs) fresh.set(key, { priceUsd, source, ageMs: nowMs() - atMs });
        return fresh;
      }),
    putPrices: (rows) => write('putPrices', () => rows.forEach(({ key, priceUsd, source }) => data().prices.set(key, { priceUsd, source, atMs: nowMs() }))),
    forgetPrices: (keys) => write('forgetPrices', () => keys.forEach((key) => data().prices.delete(key))),
    getCatalogue: (baseUrl, maxAgeMs) =>
      now(() => {
        const stored = data().catalogues.get(baseUrl);
        return stored === undefined || nowMs() - stored.atMs > maxAgeMs ? undefined : (JSON.parse(stored.json) as unknown);
      }),
    putCatalogue: (baseUrl, json) => write('putCatalogue', () => void data().catalogues.set(baseUrl, { json: JSON.stringify(json), atMs: nowMs() })),

    recoverInterrupted: change('recoverInterrupted'),
    reserveForSubmit: change('reserveForSubmit'),
    markSubmitted: change('markSubmitted'),
    markNotTaken: change('markNotTaken'),
    markRefused: change('markRefused'),
    markInDoubt: change('markInDoubt'),
    markDone: change('markDone'),
    markFailedRemote: change('markFailedRemote'),
    markSkipped: change('markSkipped'),
    noteUncollected: change('noteUncollected'),
    noteStillRunning: change('noteStillRunning'),
    recordEvent: change('recordEvent'),

    readInputs: (after, limit) => now(() => graph.readInputs(after, limit)),
    dependentsReady: (upstreamId, send) => now(() => graph.dependentsReady(upstreamId, send)),
    settleBlocked: (send) => write('settleBlocked', () => graph.settleBlocked(send)),
    priceForSend: (jobId, price) => write('priceForSend', () => graph.priceForSend(jobId, price)),
    inputsChanged: (limit) => now(() => graph.inputsChanged(limit)),

    addWebhookRun: (secret) =>
      write('addWebhookRun', () => {
        if (secret.length < 32 || secret.length > 255) throw new Error('bug in mediabatch: a webhook secret must be 32 to 255 characters');
        const id = data().webhookRuns.push({ id: data().webhookRuns.length + 1, secret });
        // The run's number only: the secret never goes into the event log.
        appendEvent(data(), nowIso(), null, 'webhook_run', null, null, { run: id });
        return id;
      }),
    webhookRuns: () => now(() => data().webhookRuns.map((run) => ({ ...run }))),
    jobForDelivery: (requestId) =>
      now(() => {
        const job = [...data().jobs.values()].find((candidate) => candidate.requestId === requestId);
        return job && { id: job.id, type: job.type, state: job.state, paramsJson: job.paramsJson, webhookRun: data().webhookJobs.get(job.id) ?? null };
      }),
    noteWebhookRun: (jobId, runId) => write('noteWebhookRun', () => void data().webhookJobs.set(jobId, runId)),
    recordDelivery: ({ deliveryId }) =>
      write('recordDelivery', () => {
        const first = !data().deliveries.has(deliveryId);
        data().deliveries.add(deliveryId);
        return first;
      }),

    getMeta: (key) => now(() => data().meta.get(key)),
    setMeta: (key, value) => write('setMeta', () => void data().meta.set(key, value)),
    acquireRunLock: (holder) => write('acquireRunLock', () => acquireRunLock(holder)),
    releaseRunLock: () => now(releaseRunLock),
    copyTo: () => Promise.reject(new Error('bug in mediabatch: an in-memory ledger cannot be copied to a file (copyTo); only a file ledger can')),
    flush: () => Promise.resolve(),
    close: () =>
      now(() => {
        if (draft !== undefined) shared.ingesting = false;
        draft = undefined;
        releaseRunLock();
      }),
  };
}
