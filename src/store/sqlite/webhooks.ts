import type { StoreContext, Sync } from './context.js';
import type { DeliveryJob, WebhookLedger, WebhookRun } from '../ledger.js';

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
