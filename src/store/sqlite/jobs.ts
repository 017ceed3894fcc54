import type Database from 'better-sqlite3';
import type { CostRow, EventRow, FollowRow, IngestLedger, JobQuery, KeyPrice, ListingLedger } from '../ledger.js';
import type { PlanLedger, PriceGroupRow, SendSelection, UnitFile, UnitRecord } from '../ledger.js';
import { JOB_COLUMNS_SQL, toJobRow, type StoreContext, type Sync } from './context.js';
import { isGlob, pickParams, pickSql, READY_SQL, SCOPE_SQL, SEND_SQL, sendParams, sendSql } from './selection.js';
import { canTransition, JOB_STATES, type JobState } from '../../jobs/states.js';

/** A price group's jobs of one length (chars null for kinds not priced by length). */
type GroupLine = Pick<PriceGroupRow, 'groupKey' | 'type' | 'paramsJson' | 'jobs'> & { chars: number | null };

/** The jobs table and the event log, read a window at a time, and the plan's writes over a selection. */
type JobRecords = ListingLedger &
  Omit<IngestLedger, 'beginIngest'> &
  Pick<PlanLedger, 'priceGroups' | 'applyPrices' | 'costRows' | 'skipAfter' | 'unmatchedPicks' | 'spentMicro'>;

// The issue is the kind of the note that set last_error (transitions.ts); only the few
// submitted rows with an error look it up, through the events' index on job_id.
const ISSUE_VALUE_SQL = "SELECT kind FROM events WHERE events.job_id = jobs.id AND kind IN ('not_collected', 'status_unknown') ORDER BY events.id DESC LIMIT 1";
const ISSUE_SQL = `CASE WHEN state = 'submitted' AND last_error IS NOT NULL THEN (${ISSUE_VALUE_SQL}) END AS issue`;

/** The log's columns under EventRow's names; `detail` is JSON text until parseDetail. */
const EVENTS = `SELECT id, at, job_id AS jobId, kind, from_state AS fromState, to_state AS toState,
  detail_json AS detail FROM events`;

function parseDetail(row: EventRow): EventRow {
  row.detail = typeof row.detail === 'string' ? JSON.parse(row.detail) : null;
  return row;
}

/** Parameter prefixes of a listing's flag and of a pick beside a send selection in one statement. */
const FLAG = 'flag_';
const PICK = 'pick_';

// The bulk skip below writes what markSkipped writes, one row at a time; it must stay a move the table allows.
if (!canTransition('pending', 'skipped')) throw new Error('bug in mediabatch: skipAfter moves pending jobs to skipped, which the state table forbids');

export function createJobRecords(ctx: StoreContext): Sync<JobRecords> {
  const { db } = ctx;
  const statements = new Map<string, Database.Statement>();
  /** Statements whose text depends on a query's shape, prepared once per shape. */
  const prepared = (sql: string): Database.Statement => {
    let statement = statements.get(sql);
    if (statement === undefined) statements.set(sql, (statement = db.prepare(sql)));
    return statement;
  };

  const selectUnits = db.prepare<[], UnitRecord>('SELECT key, position, fingerprint, jobs, read_at AS readAt FROM units ORDER BY position');
  const selectUnitFiles = db.prepare<[string, string, number], UnitFile>(
    'SELECT path, stamp FROM unit_files WHERE unit = ? AND path > ? ORDER BY path LIMIT ?',
  );
  const selectFollowing = db.prepare<[number, number], FollowRow>(
    `SELECT id, type, request_id AS requestId, params_json AS paramsJson, follow_seq AS followSeq, submitted_at AS submittedAt FROM jobs
     WHERE state = 'submitted' AND follow_seq > ? AND request_id IS NOT NULL ORDER BY follow_seq LIMIT ?`,
  );
  // Ids compare ignoring case (schema.ts), and so do parents: both walk the index jobs_by_parent.
  const selectParts = db.prepare<[string], unknown[]>(`SELECT ${JOB_COLUMNS_SQL} FROM jobs WHERE parent_id = ? COLLATE NOCASE AND in_manifest = 1 ORDER BY id`).raw();
  const selectJob = db.prepare<[string], unknown[]>(`SELECT ${JOB_COLUMNS_SQL} FROM jobs WHERE id = ?`).raw();
  const selectSplitsDone = db.prepare<[string, number], { parentId: string }>(
    `SELECT MIN(parent_id) AS parentId FROM jobs WHERE parent_id > ? COLLATE NOCASE AND in_manifest = 1
     GROUP BY parent_id COLLATE NOCASE HAVING SUM(state <> 'done') = 0 ORDER BY parent_id COLLATE NOCASE LIMIT ?`,
  );
  const selectGroups = db.prepare<Record<string, number | string>, GroupLine>(
    `SELECT group_key AS groupKey, type, MIN(params_json) AS paramsJson, text_chars AS chars, COUNT(*) AS jobs
     FROM jobs WHERE ${SEND_SQL} GROUP BY group_key, text_chars ORDER BY group_key, text_chars`,
  );
  // Prices arrive by key (thousands at most); the jobs (a million, perhaps) take theirs in one pass.
  db.exec('CREATE TEMP TABLE IF NOT EXISTS key_prices (key TEXT PRIMARY KEY, price_micro INTEGER NOT NULL, source TEXT NOT NULL)');
  const clearKeyPrices = db.prepare('DELETE FROM temp.key_prices');
  const insertKeyPrice = db.prepare('INSERT OR REPLACE INTO temp.key_prices (key, price_micro, source) VALUES (@priceKey, @priceMicro, @source)');
  const updatePrices = db.prepare(
    `UPDATE jobs SET price_micro = p.price_micro, price_source = p.source, updated_at = @now
     FROM temp.key_prices AS p WHERE p.key = jobs.price_key AND ${SEND_SQL}`,
  );
  // The cost report's lines: every listed job, each flagged if `send` selects it; or, for a plan,
  // only the few a run may still send, found by state (jobs_by_state), not among a million sent.
  const costs = (toSend: string, where: string) =>
    db.prepare<Record<string, number | string>, Omit<CostRow, 'toSend'> & { toSend: number }>(
      `SELECT type, json_extract(params_json, '$.model') AS model, group_key AS groupKey, price_source AS priceSource,
         ${toSend} AS toSend, COUNT(*) AS jobs, COALESCE(SUM(price_micro), 0) AS priceMicro, SUM(price_micro IS NULL) AS unpriced
       FROM jobs WHERE ${where} GROUP BY 1, 2, 3, 4, 5`,
    );
  const selectCosts = costs(`(${SEND_SQL})`, 'in_manifest = 1');
  const selectCostsToSend = costs('1', SEND_SQL);
  const skipEvents = db.prepare(
    `INSERT INTO events (at, job_id, kind, from_state, to_state, detail_json)
     SELECT @now, id, CASE state WHEN 'pending' THEN 'skipped' ELSE 'not_sent' END, state,
       CASE state WHEN 'pending' THEN 'skipped' ELSE state END, json_object('reason', @reason, 'spentMicro', spent_micro)
     FROM jobs WHERE ${SEND_SQL} AND manifest_index > @after ORDER BY manifest_index`,
  );
  const skipRows = db.prepare(
    `UPDATE jobs SET state = 'skipped', last_error = @reason, updated_at = @now WHERE ${SEND_SQL} AND manifest_index > @after AND state = 'pending'`,
  );
  // Each stops at the first job that matches: a pick that matches is answered at once.
  const selectIdListed = db.prepare<[string], { one: number }>('SELECT 1 AS one FROM jobs WHERE id = ? AND in_manifest = 1');
  const selectIdMatching = db.prepare<[string], { one: number }>('SELECT 1 AS one FROM jobs WHERE in_manifest = 1 AND id GLOB ? LIMIT 1');
  const selectTagCarried = db.prepare<[string], { one: number }>(
    'SELECT 1 AS one FROM jobs, json_each(jobs.tags_json) AS t WHERE jobs.in_manifest = 1 AND t.value = ? LIMIT 1',
  );
  // Kept by triggers on every write to a job (schema.ts, migration 9).
  const selectJobsVersion = db.prepare<[], { value: number }>("SELECT value FROM counters WHERE name = 'jobs_written'");
  const selectLastEvent = db.prepare<[], { id: number | null }>('SELECT MAX(id) AS id FROM events');
  // Both walk an index in id order from `afterId` (events_by_job holds (job_id, rowid)), so a
  // window costs its own size whatever the log's.
  const selectWindow = db.prepare<[number, number], EventRow>(`${EVENTS} WHERE id > ? ORDER BY id LIMIT ?`);
  const selectJobWindow = db.prepare<[string, number, number], EventRow>(
    `${EVENTS} WHERE job_id = ? AND id > ? ORDER BY id LIMIT ?`,
  );

  // Only the temporary table is written here: the jobs take their prices in one statement after.
  const stagePrices = db.transaction((prices: readonly KeyPrice[]): void => {
    clearKeyPrices.run();
    for (const price of prices) {
      if (!Number.isSafeInteger(price.priceMicro) || price.priceMicro < 0) {
        throw new Error(`bug in mediabatch: price key ${price.priceKey} was priced at ${price.priceMicro} µUSD, not a whole number of micro-dollars`);
      }
      insertKeyPrice.run(price);
    }
  });
  /**
   * One UPDATE, a transaction of its own: inside an explicit one, SQLite keeps a statement
   * journal of every page the statement changes (a temporary file the size of the jobs table,
   * 700 MB at a million jobs); alone, the statement needs none and is just as atomic.
   */
  const applyPrices = (prices: readonly KeyPrice[], send: SendSelection): void => {
    stagePrices(prices);
    try {
      updatePrices.run({ now: ctx.nowIso(), ...sendParams(send) });
    } finally {
      clearKeyPrices.run();
    }
  };

  return {
    units: () => selectUnits.all(),
    unitFiles: (unitKey, afterPath, limit) => selectUnitFiles.all(unitKey, afterPath, limit),
    getJob: (id) => {
      const values = selectJob.get(id);
      return values === undefined ? undefined : toJobRow(values);
    },
    readJobs: (query) => {
      const { where, params } = jobFilter(query);
      // The flag reads parameters of its own, so a query may filter by one selection and flag by another.
      const flag = query.flagSend === undefined ? '' : `, (${sendSql(FLAG)}) AS to_send`;
      const sql = `SELECT ${JOB_COLUMNS_SQL}, ${ISSUE_SQL}${flag} FROM ${fromSql(query)} WHERE ${where} ORDER BY manifest_index, id LIMIT @limit`;
      const flagParams = query.flagSend === undefined ? {} : sendParams(query.flagSend, FLAG);
      return (prepared(sql).raw().all({ ...params, ...flagParams, limit: query.limit }) as unknown[][]).map(toJobRow);
    },
    countJobs: (query) => {
      const { where, params } = jobFilter(query);
      return (prepared(`SELECT COUNT(*) AS n FROM ${fromSql(query)} WHERE ${where}`).get(params) as { n: number }).n;
    },
    readFollowing: (afterSeq, limit) => selectFollowing.all(afterSeq, limit),
    readParts: (parentId) => selectParts.all(parentId).map(toJobRow),
    splitsDone: (afterId, limit) => selectSplitsDone.all(afterId, limit).map((row) => row.parentId),
    priceGroups: (send) => groupLengths(selectGroups.all(sendParams(send))),
    applyPrices,
    costRows: (send, only) =>
      (only === 'to_send' ? selectCostsToSend : selectCosts).all(sendParams(send)).map((row) => ({ ...row, toSend: row.toSend === 1 })),
    skipAfter: (after, send, reason) => {
      const values = { after, reason, now: ctx.nowIso(), ...sendParams(send) };
      const leftOut = skipEvents.run(values).changes;
      return { leftOut, skipped: skipRows.run(values).changes };
    },
    unmatchedPicks: (pick) => ({
      only: (pick.only ?? []).filter((pattern) => (isGlob(pattern) ? selectIdMatching : selectIdListed).get(pattern) === undefined),
      tags: (pick.tags ?? []).filter((tag) => selectTagCarried.get(tag) === undefined),
    }),
    lastEventId: () => selectLastEvent.get()?.id ?? 0,
    countsByState: (scope = 'all') => {
      const counts = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
      const rows = prepared(`SELECT state, COUNT(*) AS n FROM jobs WHERE ${SCOPE_SQL[scope]} GROUP BY state`).all() as { state: JobState; n: number }[];
      for (const { state, n } of rows) counts[state] = n;
      return counts;
    },
    spentMicro: () => ctx.spentTotalMicro(),
    jobsVersion: () => {
      const row = selectJobsVersion.get();
      if (row === undefined) throw new Error('bug in mediabatch: the ledger has no jobs_written counter (migration 9)');
      return row.value;
    },
    readEvents: ({ afterId, limit, jobId }) => {
      if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`bug in mediabatch: a window of ${limit} events was asked for`);
      const rows = jobId === undefined ? selectWindow.all(afterId, limit) : selectJobWindow.all(jobId, afterId, limit);
      return rows.map(parseDetail);
    },
  };
}

/**
 * Which index a query reads, where the planner (which keeps no statistics here) would pick a
 * worse one (schema.ts, migration 8). Jobs with a collect issue are the few in jobs_noted. A
 * keyset window walks manifest order whatever its filter, so it costs its own size: with a
 * state term the planner would read jobs_by_state and sort every matching row for each window.
 * A listing without a cursor is left to the planner, which finds its few rows by state first.
 */
function fromSql(query: Pick<JobQuery, 'issue' | 'after'>): string {
  if (query.issue !== undefined) return 'jobs INDEXED BY jobs_noted';
  return query.after === undefined ? 'jobs' : 'jobs INDEXED BY jobs_by_manifest_index';
}

/** The conditions of a query, one text per query shape; the values are bound, never written into it. */
function jobFilter(query: Omit<JobQuery, 'limit'>): { where: string; params: Record<string, unknown> } {
  const where = [SCOPE_SQL[query.scope]];
  const params: Record<string, unknown> = {};
  if (query.after !== undefined) {
    // Dropped jobs may share an index with listed ones: the id breaks the tie.
    where.push('(manifest_index > @afterIndex OR (manifest_index = @afterIndex AND id > @afterId))');
    params['afterIndex'] = query.after.index;
    params['afterId'] = query.after.id;
  }
  if (query.through !== undefined) {
    where.push('manifest_index <= @through');
    params['through'] = query.through;
  }
  if (query.states?.length === 1) {
    // One state as a plain equality: the planner then reads jobs_by_state in manifest order.
    where.push('state = @state');
    params['state'] = query.states[0];
  } else if (query.states !== undefined) {
    where.push('state IN (SELECT value FROM json_each(@states))');
    params['states'] = JSON.stringify(query.states);
  }
  if (query.types !== undefined) {
    where.push('type IN (SELECT value FROM json_each(@types))');
    params['types'] = JSON.stringify(query.types);
  }
  if (query.send !== undefined) {
    where.push(`(${SEND_SQL})`);
    Object.assign(params, sendParams(query.send));
  }
  if (query.ready === true) where.push(READY_SQL);
  if (query.pick !== undefined) {
    where.push(`(${pickSql(PICK)})`);
    Object.assign(params, pickParams(query.pick, PICK));
  }
  if (query.failedAfter !== undefined) {
    // The failure that left the row failed is its newest `failed` event; events_by_job finds it.
    where.push(`state = 'failed' AND EXISTS (SELECT 1 FROM events WHERE events.job_id = jobs.id AND events.kind = 'failed' AND events.id > @failedAfter)`);
    params['failedAfter'] = query.failedAfter;
  }
  if (query.issue !== undefined) {
    where.push(`state = 'submitted' AND last_error IS NOT NULL AND (${ISSUE_VALUE_SQL}) = @issue`);
    params['issue'] = query.issue;
  }
  return { where: where.join(' AND '), params };
}

function groupLengths(rows: readonly GroupLine[]): PriceGroupRow[] {
  const groups = new Map<string, PriceGroupRow>();
  for (const row of rows) {
    let group = groups.get(row.groupKey);
    if (group === undefined) groups.set(row.groupKey, (group = { groupKey: row.groupKey, type: row.type, paramsJson: row.paramsJson, jobs: 0, lengths: [] }));
    group.jobs += row.jobs;
    if (row.chars !== null) group.lengths.push({ chars: row.chars, jobs: row.jobs });
  }
  return [...groups.values()];
}
