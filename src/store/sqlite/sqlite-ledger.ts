import type { Ledger, LedgerIngest } from '../ledger.js';
import type { CoreIngest } from './ingest.js';
import type { LedgerChange, ChangeAnswer } from './changes.js';
import { openCore, type SqliteCore } from './core.js';
import { groupCommit, type GroupCommit } from './group-commit.js';

/**
 * How a SQLite ledger is opened; each mode is what one kind of caller needs:
 * - 'read-only': `status` and reports. Never creates, migrates or writes (a missing file is a
 *   LocalIoError E_NO_LEDGER); every change is refused as a bug.
 * - 'read-write': run, estimate, validate, tests. Creates and migrates the file; a turn of the
 *   event loop's state changes commit in one transaction (group-commit.ts).
 * - 'scratch': a throw-away file for one command (estimate's copy while a run holds the ledger):
 *   as 'read-write', with no WAL and no disk flushes.
 */
export type SqliteLedgerMode = 'read-only' | 'read-write' | 'scratch';

export interface SqliteLedgerOptions {
  mode: SqliteLedgerMode;
  /** Epoch milliseconds; tests pass a clock to age caches. */
  nowMs?: () => number;
}

/**
 * Opens the ledger file at `path` (WAL, synchronous=FULL, migrated on open unless read-only).
 * Every way the file can be unusable ends in a LocalIoError naming it and what to do.
 */
export async function openSqliteLedger(path: string, options: SqliteLedgerOptions): Promise<Ledger> {
  const readonly = options.mode === 'read-only';
  const core = openCore(path, { readonly, nowMs: options.nowMs, scratch: options.mode === 'scratch' });
  return sqliteLedger(core, groupCommit(core));
}

/** The synchronous session behind the async interface: each call's answer is already applied. */
function asyncIngest(session: CoreIngest): LedgerIngest {
  const call = <T>(fn: () => T): Promise<T> => {
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return {
    keep: (unitKey) => call(() => session.keep(unitKey)),
    claim: (unitKey, claims) => call(() => session.claim(unitKey, claims)),
    put: (unitKey, specs) => call(() => session.put(unitKey, specs)),
    putUnitFiles: (unitKey, files) => call(() => session.putUnitFiles(unitKey, files)),
    commit: (units) => call(() => session.commit(units)),
    rollback: () => call(() => session.rollback()),
  };
}

function sqliteLedger(core: SqliteCore, committer: GroupCommit): Ledger {
  const { readonly } = core;
  /** A read, or a set-up write, in a transaction of its own: its answer is already committed. */
  const now = <T>(fn: () => T): Promise<T> => {
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(error);
    }
  };
  const refused = (what: string): Promise<never> =>
    Promise.reject(new Error(`bug in mediabatch: ${what} on the ledger ${core.path}, which was opened read-only`));
  const write = <T>(what: string, fn: () => T): Promise<T> => (readonly ? refused(what) : now(fn));
  const change = <C extends LedgerChange>(c: C): Promise<ChangeAnswer<C>> =>
    readonly ? refused(`${c.kind} for job "${c.jobId ?? '-'}"`) : committer.commit(c);

  let closed: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    try {
      await committer.drained();
    } finally {
      core.close();
    }
  };

  return {
    location: core.path,
    readonly,
    beginIngest: () => write('beginIngest', () => asyncIngest(core.beginIngest())),
    units: () => now(() => core.units()),
    unitFiles: (unitKey, afterPath, limit) => now(() => core.unitFiles(unitKey, afterPath, limit)),
    getJob: (id) => now(() => core.getJob(id)),
    readJobs: (query) => now(() => core.readJobs(query)),
    countJobs: (query) => now(() => core.countJobs(query)),
    readFollowing: (afterSeq, limit) => now(() => core.readFollowing(afterSeq, limit)),
    readParts: (parentId) => now(() => core.readParts(parentId)),
    splitsDone: (afterId, limit) => now(() => core.splitsDone(afterId, limit)),
    priceGroups: (send) => now(() => core.priceGroups(send)),
    applyPrices: (prices, send) => write('applyPrices', () => core.applyPrices(prices, send)),
    costRows: (send, only) => now(() => core.costRows(send, only)),
    skipAfter: (after, send, reason) => write('skipAfter', () => core.skipAfter(after, send, reason)),
    unmatchedPicks: (pick) => now(() => core.unmatchedPicks(pick)),
    lastEventId: () => now(() => core.lastEventId()),
    countsByState: (scope) => now(() => core.countsByState(scope)),
    spentMicro: () => now(() => core.spentMicro()),
    jobsVersion: () => now(() => core.jobsVersion()),
    eventsFor: (jobId) => now(() => core.eventsFor(jobId)),
    readEvents: (window) => now(() => core.readEvents(window)),
    recoverInterrupted: () => write('recoverInterrupted', () => core.recoverInterrupted()),
    reserveForSubmit: (jobId, budgetMicro, allowFrom) => change({ kind: 'reserve', jobId, budgetMicro, allowFrom }),
    markSubmitted: (jobId, requestId) => change({ kind: 'submitted', jobId, requestId }),
    markNotTaken: (jobId, reason) => change({ kind: 'not-taken', jobId, reason }),
    markRefused: (jobId, reason) => change({ kind: 'refused', jobId, reason }),
    markInDoubt: (jobId, reason) => change({ kind: 'in-doubt', jobId, reason }),
    markDone: (jobId, result) => change({ kind: 'done', jobId, result }),
    markFailedRemote: (jobId, failure) => change({ kind: 'failed-remote', jobId, failure }),
    markSkipped: (jobId, reason) => change({ kind: 'skipped', jobId, reason }),
    noteUncollected: (jobId, issue, reason) => change({ kind: 'uncollected', jobId, issue, reason }),
    noteStillRunning: (jobId) => change({ kind: 'still-running', jobId }),
    recordEvent: (jobId, event, detail) => change({ kind: 'event', jobId, event, detail }),
    getPrices: (maxAgeMs) => now(() => core.getPrices(maxAgeMs)),
    putPrices: (rows) => write('putPrices', () => core.putPrices(rows)),
    forgetPrices: (keys) => write('forgetPrices', () => core.forgetPrices(keys)),
    getCatalogue: (baseUrl, maxAgeMs) => now(() => core.getCatalogue(baseUrl, maxAgeMs)),
    putCatalogue: (baseUrl, json) => write('putCatalogue', () => core.putCatalogue(baseUrl, json)),
    getMeta: (key) => now(() => core.getMeta(key)),
    setMeta: (key, value) => write('setMeta', () => core.setMeta(key, value)),
    addWebhookRun: (secret) => write('addWebhookRun', () => core.addWebhookRun(secret)),
    webhookRuns: () => now(() => core.webhookRuns()),
    jobForDelivery: (requestId) => now(() => core.jobForDelivery(requestId)),
    noteWebhookRun: (jobId, runId) => change({ kind: 'webhook-run', jobId, runId }),
    recordDelivery: (delivery) => change({ kind: 'delivery', jobId: delivery.jobId, delivery }),
    acquireRunLock: (holder) => write('acquireRunLock', () => core.acquireRunLock(holder)),
    releaseRunLock: () => (readonly ? Promise.resolve() : now(() => core.releaseRunLock())),
    copyTo: (file) => now(() => core.copyTo(file)),
    flush: () => committer.drained(),
    close: () => (closed ??= close()),
  };
}
