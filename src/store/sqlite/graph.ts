import type Database from 'better-sqlite3';
import { assertTransition, type JobState } from '../../jobs/states.js';
import { blockedReason, type ChangedInput, type GraphLedger, type InputRef } from '../ledger.js';
import { JOB_COLUMNS_SQL, toJobRow, type StoreContext, type Sync } from './context.js';
import { pickSql, READY_SQL, SEND_SQL, sendParams } from './selection.js';

/** Inputs a run may still bring to done: `send` selects them, they are on their way, or they wait and are picked. */
const SENDABLE_SQL = `(${SEND_SQL}) OR state IN ('submitting', 'submitted')
  OR (state = 'blocked' AND in_manifest = 1 AND ${pickSql()})`;
/** After a run nothing more is sent: only what is on its way, or waits on something that is, may still be done. */
const SENDABLE_AFTER_RUN_SQL = "state IN ('pending', 'submitting', 'submitted', 'blocked')";
/** Of the job the query names `jobs`: whether it is a split job (its parts name it), and their type. */
const PARTS_SQL = 'FROM jobs AS p WHERE p.parent_id = i.from_id COLLATE NOCASE AND p.in_manifest = 1';

interface Blocking {
  id: string;
  state: JobState;
  spentMicro: number;
  fromId: string;
  fromState: JobState;
  fromError: string | null;
  own: number;
}
type InputRow = Omit<InputRef, 'fromSplit' | 'stepped'> & { fromSplit: number; stepped: number };

/** The jobs that take other jobs' results (ledger.ts: GraphLedger), found through job_inputs' two indexes. */
export function createGraph(ctx: StoreContext): Sync<GraphLedger> {
  const { db } = ctx;
  // Jobs that will not be done this run: by their own state (own = 1), or waiting on such a job.
  db.exec('CREATE TEMP TABLE IF NOT EXISTS graph_waiting (id TEXT PRIMARY KEY, own INTEGER NOT NULL)');
  // IS NOT 1: a flag the service never set (NULL) makes the condition NULL, which NOT leaves NULL.
  const seed = (sendable: string): Database.Statement =>
    db.prepare(`INSERT INTO temp.graph_waiting (id, own) SELECT id, 1 FROM jobs
      WHERE id IN (SELECT from_id FROM job_inputs) AND state <> 'done' AND (${sendable}) IS NOT 1`);
  const seedSend = seed(SENDABLE_SQL);
  const seedAfterRun = seed(SENDABLE_AFTER_RUN_SQL);
  // A job that would wait (pending, skipped, blocked) waits on its input, even one left out itself:
  // it is blocked in this same settle, and its dependents say so.
  const spread = db.prepare(
    `INSERT INTO temp.graph_waiting (id, own)
     SELECT DISTINCT i.job_id, jobs.state NOT IN ('pending', 'skipped', 'blocked')
     FROM job_inputs AS i JOIN jobs ON jobs.id = i.job_id
     WHERE jobs.state <> 'done' AND i.from_id IN (SELECT id FROM temp.graph_waiting)
     ON CONFLICT (id) DO UPDATE SET own = 0 WHERE own = 1 AND excluded.own = 0`,
  );
  // CROSS JOIN keeps this order: from the few waiting jobs to their dependents, not from every pending job.
  const toBlock = db.prepare<[], Blocking>(
    `SELECT jobs.id, jobs.state, jobs.spent_micro AS spentMicro, i.from_id AS fromId, u.state AS fromState,
       u.last_error AS fromError, w.own
     FROM temp.graph_waiting AS w CROSS JOIN job_inputs AS i ON i.from_id = w.id
       CROSS JOIN jobs ON jobs.id = i.job_id JOIN jobs AS u ON u.id = w.id
     WHERE jobs.in_manifest = 1 AND jobs.state IN ('pending', 'skipped')
     ORDER BY jobs.manifest_index, jobs.id, i.field`,
  );
  const toUnblock = db.prepare<[], Pick<Blocking, 'id' | 'spentMicro'>>(
    `SELECT id, spent_micro AS spentMicro FROM jobs WHERE state = 'blocked' AND in_manifest = 1
       AND id NOT IN (SELECT i.job_id FROM job_inputs AS i JOIN temp.graph_waiting AS w ON w.id = i.from_id)
     ORDER BY manifest_index, id`,
  );
  const clearWaiting = db.prepare('DELETE FROM temp.graph_waiting');
  const setState = db.prepare(
    'UPDATE jobs SET state = @to, last_error = @reason, updated_at = @now WHERE id = @id AND state = @from',
  );
  type Moved = Pick<Blocking, 'id' | 'spentMicro'>;
  const move = (job: Moved, from: JobState, to: JobState, reason: string | null): void => {
    assertTransition(job.id, from, to);
    const now = ctx.nowIso();
    setState.run({ id: job.id, from, to, reason, now });
    const detail = { reason, spentMicro: job.spentMicro };
    ctx.insertEvent(job.id, to === 'blocked' ? 'blocked' : 'unblocked', from, to, detail, now);
  };

  const selectInputs = db.prepare<Record<string, string | number>, InputRow>(
    `SELECT i.job_id AS jobId, jobs.type AS jobType, i.field, i.from_id AS fromId, i.origin,
       COALESCE(u.type, (SELECT type ${PARTS_SQL} LIMIT 1)) AS fromType, EXISTS (SELECT 1 ${PARTS_SQL}) AS fromSplit,
       jobs.step IS NOT NULL AS stepped
     FROM job_inputs AS i JOIN jobs ON jobs.id = i.job_id AND jobs.in_manifest = 1
       LEFT JOIN jobs AS u ON u.id = i.from_id AND u.in_manifest = 1
     WHERE (i.job_id, i.field) > (@jobId, @field) ORDER BY i.job_id, i.field LIMIT @limit`,
  );
  // CROSS JOIN keeps this order: from the job's few dependents, not from every job waiting to be sent.
  const selectDependents = db
    .prepare<Record<string, string | number>, unknown[]>(
      `SELECT ${JOB_COLUMNS_SQL} FROM (SELECT DISTINCT job_id FROM job_inputs WHERE from_id = @upstreamId) AS d
       CROSS JOIN jobs ON jobs.id = d.job_id WHERE ${SEND_SQL} AND ${READY_SQL} ORDER BY manifest_index, id`,
    )
    .raw();
  const selectPriced = db.prepare<[string], { state: JobState; priceMicro: number | null }>(
    'SELECT state, price_micro AS priceMicro FROM jobs WHERE id = ?',
  );
  const reprice = db.prepare(
    `UPDATE jobs SET price_micro = @priceMicro, price_source = @source, price_key = @priceKey, price_bound = 0,
       updated_at = @now WHERE id = @id`,
  );
  const selectChanged = db.prepare<[number], ChangedInput>(
    `SELECT jobs.id, jobs.state, i.field, i.from_id AS fromId FROM job_inputs AS i
     JOIN jobs ON jobs.id = i.job_id AND jobs.in_manifest = 1 LEFT JOIN jobs AS u ON u.id = i.from_id
     WHERE i.sent_sha256 IS NOT NULL AND u.result_sha256 IS NOT i.sent_sha256
     ORDER BY jobs.manifest_index, jobs.id, i.field LIMIT ?`,
  );

  return {
    readInputs: (after, limit) =>
      selectInputs
        .all({ jobId: after?.jobId ?? '', field: after?.field ?? '', limit })
        .map((row) => ({ ...row, fromSplit: row.fromSplit === 1, stepped: row.stepped === 1 })),
    dependentsReady: (upstreamId, send) => selectDependents.all({ upstreamId, ...sendParams(send) }).map(toJobRow),
    settleBlocked: (send) => {
      clearWaiting.run();
      if (send === null) seedAfterRun.run();
      else seedSend.run(sendParams(send));
      while (spread.run().changes > 0);
      let blocked = 0;
      let last: string | undefined;
      for (const row of toBlock.all()) {
        // Its first waiting input, in field order, gives the reason.
        if (row.id === last) continue;
        last = row.id;
        const input = { state: row.fromState, lastError: row.fromError };
        move(row, row.state, 'blocked', blockedReason(row.fromId, input, row.own === 0));
        blocked += 1;
      }
      const unblocking = toUnblock.all();
      for (const row of unblocking) move(row, 'blocked', 'pending', null);
      return { blocked, unblocked: unblocking.length };
    },
    priceForSend: (id, price) => {
      const row = selectPriced.get(id);
      if (row === undefined || !['pending', 'skipped', 'blocked'].includes(row.state)) {
        const state = row?.state ?? 'not in the ledger';
        const only = 'only pending, skipped or blocked';
        throw new Error(`bug in mediabatch: job "${id}" cannot be priced for its send: it is ${state} (${only})`);
      }
      assertWholeMicro(id, price.priceMicro);
      const now = ctx.nowIso();
      reprice.run({ ...price, id, now });
      ctx.insertEvent(id, 'repriced', row.state, row.state, { ...price, boundMicro: row.priceMicro }, now);
    },
    inputsChanged: (limit) => selectChanged.all(limit),
  };
}

function assertWholeMicro(id: string, priceMicro: number): void {
  if (Number.isSafeInteger(priceMicro) && priceMicro >= 0) return;
  const what = `${priceMicro} µUSD, not a whole number of micro-dollars`;
  throw new Error(`bug in mediabatch: job "${id}" was priced at ${what}`);
}

/**
 * Each listed job with inputs gets its step, 1 + its inputs' largest (an input without inputs of
 * its own is step 1): one level a statement, so the cost is the pipeline's depth times its
 * references. A job in a cycle gets none (the graph check refuses the manifest).
 */
export function writeSteps(db: Database.Database): void {
  db.exec('CREATE TEMP TABLE IF NOT EXISTS graph_steps (id TEXT PRIMARY KEY, step INTEGER NOT NULL)');
  db.exec('DELETE FROM temp.graph_steps');
  const hasNoInputs = `NOT EXISTS (SELECT 1 FROM job_inputs AS k
    JOIN jobs AS kj ON kj.id = k.job_id AND kj.in_manifest = 1 WHERE k.job_id = i.from_id)`;
  const level = db.prepare(
    `INSERT INTO temp.graph_steps (id, step)
     SELECT i.job_id, @step FROM job_inputs AS i JOIN jobs ON jobs.id = i.job_id AND jobs.in_manifest = 1
     WHERE i.job_id NOT IN (SELECT id FROM temp.graph_steps) GROUP BY i.job_id
     HAVING MIN(i.from_id IN (SELECT id FROM temp.graph_steps) OR ${hasNoInputs}) = 1`,
  );
  for (let step = 2; level.run({ step }).changes > 0; step += 1);
  db.exec('UPDATE jobs SET step = s.step FROM temp.graph_steps AS s WHERE s.id = jobs.id AND jobs.step IS NOT s.step');
}
