import type { EventRow, JobOutcome, JobPrice, JobRow, JobSpec, JobView, JobWindow, SyncResult } from '../ledger.js';
import type { StoreContext } from './context.js';
import { toEventRow, toJobRow, type RawEvent, type RawJob } from './rows.js';
import { JOB_STATES, type JobState } from '../../jobs/states.js';
import type { MicroUsd } from '../../money.js';

/** The jobs table and the event log as the synchronous core reads and writes them. */
export interface JobRecords {
  syncJobs(specs: readonly JobSpec[]): SyncResult;
  setPrices(rows: readonly JobPrice[]): void;
  getJob(id: string): JobRow | undefined;
  jobViews(): JobView[];
  jobOutcomes(): JobOutcome[];
  readJobs(window: JobWindow): JobRow[];
  countsByState(): Record<JobState, number>;
  spentMicro(): MicroUsd;
  eventsFor(id: string | null): EventRow[];
  recordEvent(jobId: string | null, kind: string, detail?: unknown): void;
}

export function createJobRecords(ctx: StoreContext): JobRecords {
  const { db } = ctx;
  const insertJob = db.prepare(
    `INSERT INTO jobs (id, manifest_index, content_hash, type, params_json, text_chars, state, created_at, updated_at)
     VALUES (@id, @index, @contentHash, @type, @paramsJson, @textChars, 'pending', @now, @now)`,
  );
  const updateIndex = db.prepare('UPDATE jobs SET manifest_index = @index WHERE id = @id AND manifest_index != @index');
  // A new content makes the old price meaningless; pricing runs again before anything is sent.
  const updateContent = db.prepare(
    `UPDATE jobs SET content_hash = @contentHash, type = @type, params_json = @paramsJson, text_chars = @textChars,
       price_micro = NULL, price_source = NULL, price_key = NULL, updated_at = @now
     WHERE id = @id`,
  );
  const updatePrice = db.prepare(
    `UPDATE jobs SET price_micro = @priceMicro, price_source = @source, price_key = @priceKey, updated_at = @now
     WHERE id = @id`,
  );
  const selectCounts = db.prepare<[], { state: JobState; n: number }>(
    'SELECT state, COUNT(*) AS n FROM jobs GROUP BY state',
  );
  const selectViews = db.prepare<[], JobView>(
    `SELECT id, type, state, request_id AS requestId, spent_micro AS spentMicro, json_extract(params_json, '$.format') AS format
     FROM jobs`,
  );
  // The issue is the kind of the note that set last_error (collect-notes.ts); only the few
  // submitted rows with an error look it up, through the events' index on job_id.
  const selectOutcomes = db.prepare<[], JobOutcome>(
    `SELECT id, type, json_extract(params_json, '$.model') AS model, price_source AS priceSource, state,
       request_id AS requestId, price_micro AS priceMicro, result_path AS output, last_error AS error,
       CASE WHEN state = 'submitted' AND last_error IS NOT NULL THEN
         (SELECT kind FROM events WHERE events.job_id = jobs.id AND kind IN ('not_collected', 'status_unknown') ORDER BY events.id DESC LIMIT 1)
       END AS issue
     FROM jobs ORDER BY manifest_index, id`,
  );
  // Keyset windows: each starts in the manifest_index index where the last one ended, so the
  // millionth row costs what the first does (an OFFSET would count its way past every earlier one).
  const selectFirstWindow = db.prepare<[{ limit: number }], RawJob>('SELECT * FROM jobs ORDER BY manifest_index, id LIMIT @limit');
  const selectWindowAfter = db.prepare<[{ index: number; id: string; limit: number }], RawJob>(
    `SELECT * FROM jobs WHERE manifest_index > @index OR (manifest_index = @index AND id > @id)
     ORDER BY manifest_index, id LIMIT @limit`,
  );
  const selectEvents = db.prepare<[string], RawEvent>('SELECT * FROM events WHERE job_id = ? ORDER BY id');
  const selectRunEvents = db.prepare<[], RawEvent>('SELECT * FROM events WHERE job_id IS NULL ORDER BY id');

  // One read of what sync compares, instead of a lookup per job: resuming a 10,000-job run
  // whose manifest did not change then writes nothing but the sync event.
  const selectKnown = db.prepare<[], Pick<RawJob, 'id' | 'content_hash' | 'state' | 'manifest_index'>>(
    'SELECT id, content_hash, state, manifest_index FROM jobs',
  );

  const sync = db.transaction((specs: readonly JobSpec[]): SyncResult => {
    const now = ctx.nowIso();
    const result: SyncResult = { added: 0, changed: [] };
    const known = new Map(selectKnown.all().map((row) => [row.id, row]));
    for (const spec of specs) {
      const row = known.get(spec.id);
      const values = { ...spec, textChars: spec.textChars ?? null, now };
      if (row === undefined) {
        insertJob.run(values);
        result.added += 1;
        continue;
      }
      if (row.manifest_index !== spec.index) updateIndex.run(values);
      if (row.content_hash === spec.contentHash) continue;
      if (row.state === 'pending' || row.state === 'skipped') {
        updateContent.run(values);
        ctx.insertEvent(spec.id, 'content_changed', null, null, { oldHash: row.content_hash, newHash: spec.contentHash });
      } else {
        result.changed.push({ id: spec.id, oldHash: row.content_hash, newHash: spec.contentHash, state: row.state });
      }
    }
    ctx.insertEvent(null, 'synced', null, null, { jobs: specs.length, added: result.added, changed: result.changed.length });
    return result;
  });

  const prices = db.transaction((rows: readonly JobPrice[]): void => {
    const now = ctx.nowIso();
    for (const row of rows) {
      if (!Number.isSafeInteger(row.priceMicro) || row.priceMicro < 0) {
        throw new Error(`bug in mediabatch: job "${row.id}" was priced at ${row.priceMicro} µUSD, not a whole number of micro-dollars`);
      }
      if (updatePrice.run({ ...row, now }).changes !== 1) {
        throw new Error(`bug in mediabatch: a price was set for job "${row.id}", which is not in the ledger`);
      }
    }
  });

  return {
    syncJobs: (specs) => sync.immediate(specs),
    setPrices: (rows) => prices.immediate(rows),
    getJob: (id) => {
      const raw = ctx.getRawJob(id);
      return raw === undefined ? undefined : toJobRow(raw);
    },
    jobViews: () => selectViews.all(),
    jobOutcomes: () => selectOutcomes.all(),
    readJobs: ({ after, limit }) => {
      if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`bug in mediabatch: a window of ${limit} jobs was asked for`);
      const raws = after === undefined ? selectFirstWindow.all({ limit }) : selectWindowAfter.all({ index: after.manifestIndex, id: after.id, limit });
      return raws.map(toJobRow);
    },
    countsByState: () => {
      const counts = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
      for (const { state, n } of selectCounts.all()) counts[state] = n;
      return counts;
    },
    spentMicro: () => ctx.spentTotalMicro(),
    eventsFor: (id) => (id === null ? selectRunEvents.all() : selectEvents.all(id)).map(toEventRow),
    recordEvent: (jobId, kind, detail) => ctx.insertEvent(jobId, kind, null, null, detail),
  };
}
