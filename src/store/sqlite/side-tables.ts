/** The small tables beside the jobs: caches and notes kept between runs, the run lock, what webhooks keep. */
import type { StoreContext, Sync } from './context.js';
import { holderIsAlive, LedgerLockedError, type CachedPrice, type DeliveryJob, type LedgerHandle } from '../ledger.js';
import type { LockHolder, PlanLedger, WebhookLedger, WebhookRun } from '../ledger.js';

type Caches = Pick<PlanLedger, 'getPrices' | 'putPrices' | 'forgetPrices' | 'getCatalogue' | 'putCatalogue'> &
  Pick<LedgerHandle, 'getMeta' | 'setMeta'>;

/** Things worth keeping between runs so that re-estimating costs no calls: prices, models, notes. */
export function createCaches(ctx: StoreContext): Sync<Caches> {
  const { db } = ctx;
  const selectPrices = db.prepare<[], { key: string; price_usd: number; source: string; created_at: string }>(
    'SELECT key, price_usd, source, created_at FROM prices',
  );
  const upsertPrice = db.prepare(
    `INSERT INTO prices (key, price_usd, source, created_at) VALUES (@key, @priceUsd, @source, @now)
     ON CONFLICT (key) DO UPDATE SET price_usd = excluded.price_usd, source = excluded.source,
       created_at = excluded.created_at`,
  );
  const selectCatalogue = db.prepare<[string], { json: string; fetched_at: string }>(
    'SELECT json, fetched_at FROM catalogue WHERE base_url = ?',
  );
  const upsertCatalogue = db.prepare(
    `INSERT INTO catalogue (base_url, fetched_at, json) VALUES (@baseUrl, @now, @json)
     ON CONFLICT (base_url) DO UPDATE SET fetched_at = excluded.fetched_at, json = excluded.json`,
  );
  const selectMeta = db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?');
  const upsertMeta = db.prepare(
    'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
  );
  const ageMs = (iso: string): number => ctx.nowMs() - Date.parse(iso);

  const deletePrice = db.prepare('DELETE FROM prices WHERE key = ?');

  return {
    getPrices: (maxAgeMs) => {
      const fresh = new Map<string, CachedPrice>();
      for (const row of selectPrices.all()) {
        const age = ageMs(row.created_at);
        if (age <= maxAgeMs) fresh.set(row.key, { priceUsd: row.price_usd, source: row.source, ageMs: age });
      }
      return fresh;
    },
    putPrices: (rows) => {
      const now = ctx.nowIso();
      for (const row of rows) upsertPrice.run({ key: row.key, priceUsd: row.priceUsd, source: row.source, now });
    },
    forgetPrices: (keys) => {
      for (const key of keys) deletePrice.run(key);
    },
    getCatalogue: (baseUrl, maxAgeMs) => {
      const row = selectCatalogue.get(baseUrl);
      if (row === undefined || ageMs(row.fetched_at) > maxAgeMs) return undefined;
      return JSON.parse(row.json) as unknown;
    },
    putCatalogue: (baseUrl, json) => {
      upsertCatalogue.run({ baseUrl, now: ctx.nowIso(), json: JSON.stringify(json) });
    },
    getMeta: (key) => selectMeta.get(key)?.value,
    setMeta: (key, value) => {
      upsertMeta.run(key, value);
    },
  };
}

type LockRow = LockHolder & { started_at: string };

/** The run lock (LedgerHandle.acquireRunLock); releasing drops it only if this pid on this host holds it. */
export function createRunLock(ctx: StoreContext): Sync<Pick<LedgerHandle, 'acquireRunLock' | 'releaseRunLock'>> {
  const { db } = ctx;
  const selectLock = db.prepare<[], LockRow>('SELECT pid, host, started_at, command FROM run_lock WHERE id = 1');
  const replaceLock = db.prepare(
    `INSERT OR REPLACE INTO run_lock (id, pid, host, started_at, command) VALUES (1, @pid, @host, @now, @command)`,
  );
  const deleteLock = db.prepare('DELETE FROM run_lock WHERE id = 1 AND pid = ? AND host = ?');
  let held: LockHolder | undefined;

  return {
    // The read and the write happen under one IMMEDIATE write lock (sqlite-ledger.ts, WRITES):
    // two runs starting at the same moment cannot both see the lock free.
    acquireRunLock: (holder) => {
      const current = selectLock.get();
      if (current !== undefined) {
        if (holderIsAlive(current, holder.host)) throw locked(ctx.path, current);
        const { pid, host, started_at: since, command } = current;
        ctx.insertEvent(null, 'lock_taken_over', null, null, { deadPid: pid, host, since, command });
      }
      replaceLock.run({ ...holder, now: ctx.nowIso() });
      const { pid, host, command } = holder;
      ctx.insertEvent(null, 'lock_acquired', null, null, { pid, host, command });
      held = holder;
    },
    releaseRunLock: () => {
      if (held === undefined) return;
      deleteLock.run(held.pid, held.host);
      held = undefined;
    },
  };
}

function locked(path: string, lock: LockRow): LedgerLockedError {
  return new LedgerLockedError(
    `ledger ${path} is in use by mediabatch pid ${lock.pid} on ${lock.host} since ${lock.started_at} (${lock.command}): wait for it to finish or stop it; if it is not running, delete the lock with: sqlite3 "${path}" "DELETE FROM run_lock"`,
    { pid: lock.pid, host: lock.host, command: lock.command },
  );
}

/**
 * What following jobs by webhook keeps (migration 7): each run's secret, which run sent each
 * job, and every delivery id applied. Nothing here writes an event with a secret in it.
 */
export function createWebhookRecords(ctx: StoreContext): Sync<WebhookLedger> {
  const { db } = ctx;
  const insertRun = db.prepare<{ secret: string; now: string }>('INSERT INTO webhook_runs (secret, created_at) VALUES (@secret, @now)');
  const selectRuns = db.prepare<[], WebhookRun>('SELECT id, secret FROM webhook_runs ORDER BY id');
  const selectJob = db.prepare<[string], DeliveryJob>(
    `SELECT jobs.id, jobs.type, jobs.state, jobs.params_json AS paramsJson, webhook_jobs.run_id AS webhookRun
     FROM jobs LEFT JOIN webhook_jobs ON webhook_jobs.job_id = jobs.id
     WHERE jobs.request_id = ? LIMIT 1`,
  );
  const upsertJobRun = db.prepare<{ jobId: string; runId: number }>(
    'INSERT INTO webhook_jobs (job_id, run_id) VALUES (@jobId, @runId) ON CONFLICT (job_id) DO UPDATE SET run_id = excluded.run_id',
  );
  const insertDelivery = db.prepare<{ deliveryId: string; event: string; jobId: string | null; now: string }>(
    'INSERT OR IGNORE INTO webhook_deliveries (delivery_id, received_at, event, job_id) VALUES (@deliveryId, @now, @event, @jobId)',
  );

  return {
    addWebhookRun: (secret) => {
      if (secret.length < 32 || secret.length > 255) throw new Error('bug in mediabatch: a webhook secret must be 32 to 255 characters');
      const runId = Number(insertRun.run({ secret, now: ctx.nowIso() }).lastInsertRowid);
      // The run's number only: the secret never goes into the event log.
      ctx.insertEvent(null, 'webhook_run', null, null, { run: runId });
      return runId;
    },
    webhookRuns: () => selectRuns.all(),
    jobForDelivery: (requestId) => selectJob.get(requestId),
    noteWebhookRun: (jobId, runId) => {
      upsertJobRun.run({ jobId, runId });
    },
    recordDelivery: (delivery) => insertDelivery.run({ ...delivery, now: ctx.nowIso() }).changes === 1,
  };
}
