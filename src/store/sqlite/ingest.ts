import type { JobState } from '../../jobs/states.js';
import type { IdConflict, JobSpec, LedgerIngest, PutResult, SyncResult, UnitState } from '../ledger.js';
import type { RawJob, StoreContext, Sync } from './context.js';
import { writeSteps } from './graph.js';

/** What the ingest reads of a job that holds an id. */
const KNOWN = [
  'id', 'content_hash', 'state', 'seen', 'unit', 'in_manifest', 'origin', 'retryable', 'refunded',
] as const;
type Known = Pick<RawJob, (typeof KNOWN)[number]>;

/**
 * Opens the ingest's transaction (IMMEDIATE: the write lock is taken now, so nothing another
 * process writes can interleave) and returns its session. Everything it writes becomes visible
 * at `commit`; `rollback`, or a crash, leaves the ledger as it was.
 */
export function beginIngest(ctx: StoreContext): Sync<LedgerIngest> {
  const { db } = ctx;
  db.exec('BEGIN IMMEDIATE');
  try {
    return openSession(ctx);
  } catch (error) {
    // A disk that fills up (SQLITE_FULL) may make SQLite roll the whole transaction back itself;
    // a ROLLBACK after that fails ("no transaction is active") and would hide why the ingest failed.
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

function openSession(ctx: StoreContext): Sync<LedgerIngest> {
  const { db } = ctx;
  const gen = (db.prepare("UPDATE counters SET value = value + 1 WHERE name = 'ingest' RETURNING value").get() as { value: number }).value;
  const lookup = db.prepare<[string], Known>(`SELECT ${KNOWN.join(', ')} FROM jobs WHERE id = ? COLLATE NOCASE`);
  const insert = db.prepare(
    `INSERT INTO jobs (id, manifest_index, content_hash, type, params_json, text_chars, text, files_json, tags_json, origin,
       group_key, price_key, parent_id, price_bound, unit, seen, in_manifest, state, created_at, updated_at)
     VALUES (@id, @index, @contentHash, @type, @paramsJson, @textChars, @text, @filesJson, @tagsJson, @origin,
       @groupKey, @priceKey, @parentId, @priceBound, @unit, @gen, 1, 'pending', @now, @now)`,
  );
  // A split job's id is held by its parts: it names their joined result and their playlist.
  const lookupParent = db.prepare<[string], Known & { parent_id: string }>(
    `SELECT parent_id, ${KNOWN.join(', ')} FROM jobs WHERE parent_id = ? COLLATE NOCASE AND in_manifest = 1`,
  );
  // The same content: where it is, its tags and unit change; what it sends is filled in where a
  // ledger from before mediabatch kept it lacks it. Nothing that was paid for is touched.
  const relist = db.prepare(
    `UPDATE jobs SET manifest_index = @index, origin = @origin, tags_json = @tagsJson, parent_id = @parentId, unit = @unit,
       seen = @gen, in_manifest = 1, text = COALESCE(text, @text), files_json = COALESCE(files_json, @filesJson),
       group_key = COALESCE(group_key, @groupKey), price_key = COALESCE(price_key, @priceKey)
     WHERE id = @id`,
  );
  // New content for a job nothing was paid for: its old price means nothing now.
  const replace = db.prepare(
    `UPDATE jobs SET manifest_index = @index, origin = @origin, tags_json = @tagsJson, parent_id = @parentId, unit = @unit,
       seen = @gen, in_manifest = 1, content_hash = @contentHash, type = @type, params_json = @paramsJson,
       text_chars = @textChars, text = @text, files_json = @filesJson, group_key = @groupKey, price_key = @priceKey,
       price_micro = NULL, price_source = NULL, price_bound = @priceBound, step = NULL, updated_at = @now
     WHERE id = @id`,
  );
  // A job's inputs are part of its content; the same content written again only moves their origins.
  const putInput = db.prepare(
    `INSERT INTO job_inputs (job_id, field, from_id, origin) VALUES (@id, @field, @from, @origin)
     ON CONFLICT (job_id, field) DO UPDATE SET from_id = excluded.from_id, origin = excluded.origin`,
  );
  const deleteInputs = db.prepare('DELETE FROM job_inputs WHERE job_id = ?');
  const putInputs = (spec: JobSpec): void => {
    for (const input of spec.inputs ?? []) putInput.run({ id: spec.id, ...input });
  };
  // Ids of rows with problems: kept apart from the jobs, and gone with the transaction.
  db.exec('CREATE TEMP TABLE IF NOT EXISTS ingest_claims (id TEXT PRIMARY KEY COLLATE NOCASE, origin TEXT NOT NULL)');
  db.exec('DELETE FROM temp.ingest_claims');
  const lookupClaim = db.prepare<[string], { id: string; origin: string }>('SELECT id, origin FROM temp.ingest_claims WHERE id = ?');
  const insertClaim = db.prepare('INSERT INTO temp.ingest_claims (id, origin) VALUES (?, ?)');
  const deleteUnitFiles = db.prepare('DELETE FROM unit_files WHERE unit = ?');
  // Another id that counts a spend for this content (the partial index jobs_paid_by_content).
  const lookupPaid = db.prepare<[string, string], { id: string; state: JobState }>(
    'SELECT id, state FROM jobs WHERE content_hash = ? AND spent_micro > 0 AND id <> ? COLLATE NOCASE LIMIT 1',
  );
  const insertUnitFile = db.prepare('INSERT OR REPLACE INTO unit_files (unit, path, stamp) VALUES (?, ?, ?)');

  // Most ingests hold no claim and no split job: their lookups are skipped (a third of each put).
  let claimed = 0;
  let parts = db.prepare('SELECT 1 FROM jobs WHERE parent_id IS NOT NULL LIMIT 1').get() !== undefined;
  // A ledger that never paid for anything (a first run) has no content to pay for twice.
  const paid = db.prepare('SELECT 1 FROM jobs WHERE spent_micro > 0 LIMIT 1').get() !== undefined;
  /** Whether the content is what another id was already paid for: recorded in `moved` if so. */
  const moved = (spec: JobSpec, result: PutResult): boolean => {
    const other = paid ? lookupPaid.get(spec.contentHash, spec.id) : undefined;
    if (other !== undefined) result.moved.push({ id: spec.id, paidAs: { id: other.id, state: other.state } });
    return other !== undefined;
  };

  const kept = new Set<string>();
  const started = new Map<string, number>();
  let added = 0;
  let changed = 0;
  let open = true;

  const start = (unitKey: string): void => {
    if (started.has(unitKey)) return;
    started.set(unitKey, 0);
    deleteUnitFiles.run(unitKey);
  };
  /** Another job of this manifest holds the id: one recorded in this ingest, or one of a unit kept as it was. */
  const holder = <Row extends Known>(rows: readonly Row[]): Row | undefined =>
    rows.find((row) => row.seen === gen || (row.in_manifest === 1 && row.unit !== null && kept.has(row.unit)));

  /** The conflict a job with this id would have with a job or a claim of this manifest. */
  const conflictOf = (id: string, origin: string): { rows: Known[]; conflict?: IdConflict } => {
    const rows = lookup.all(id);
    const part = parts ? holder(lookupParent.all(id)) : undefined;
    const held = holder(rows) ?? (claimed > 0 ? lookupClaim.get(id) : undefined) ?? (part === undefined ? undefined : { id: part.parent_id, origin: part.origin });
    return held === undefined ? { rows } : { rows, conflict: { id, origin, heldBy: { id: held.id, origin: held.origin } } };
  };

  const putOne = (unitKey: string, spec: JobSpec, now: string, result: PutResult): void => {
    const { rows, conflict } = conflictOf(spec.id, spec.origin);
    if (conflict !== undefined) {
      result.conflicts.push(conflict);
      return;
    }
    // Every field named: a literal that starts with a spread is built in V8's slow dictionary mode.
    const values = {
      id: spec.id,
      index: spec.index,
      contentHash: spec.contentHash,
      type: spec.type,
      paramsJson: spec.paramsJson,
      origin: spec.origin,
      groupKey: spec.groupKey,
      priceKey: spec.priceKey,
      textChars: spec.textChars ?? null,
      text: spec.text ?? null,
      filesJson: spec.filesJson ?? null,
      tagsJson: spec.tags === undefined || spec.tags.length === 0 ? null : JSON.stringify(spec.tags),
      parentId: spec.parentId ?? null,
      priceBound: spec.priceBound === true ? 1 : 0,
      unit: unitKey,
      gen,
      now,
    };
    if (spec.parentId !== undefined) parts = true;
    const row = rows.find((candidate) => candidate.id === spec.id);
    if (row === undefined) {
      moved(spec, result);
      insert.run(values);
      putInputs(spec);
      added += 1;
      return;
    }
    if (row.content_hash === spec.contentHash) {
      relist.run(values);
      putInputs(spec);
      return;
    }
    const unsent = row.state === 'pending' || row.state === 'skipped' || row.state === 'blocked';
    if (unsent || (row.state === 'failed' && row.retryable === 1 && row.refunded === 1)) {
      moved(spec, result);
      replace.run(values);
      deleteInputs.run(spec.id);
      putInputs(spec);
      ctx.insertEvent(spec.id, 'content_changed', null, null, { oldHash: row.content_hash, newHash: spec.contentHash }, now);
      return;
    }
    // Sent (or in doubt, or finished): it keeps what was sent and paid for, and is reported.
    relist.run({ ...values, text: null, filesJson: null, groupKey: null, priceKey: null });
    if (moved(spec, result)) return;
    changed += 1;
    result.changed.push({ id: spec.id, oldHash: row.content_hash, newHash: spec.contentHash, state: row.state });
  };

  const assertOpen = (): void => {
    if (!open) throw new Error('bug in mediabatch: the ledger ingest was used after it ended');
  };

  /** Drops what the manifest no longer lists, records the units, and says what changed. */
  const finish = (units: readonly UnitState[]): SyncResult => {
    const now = ctx.nowIso();
    const keptJson = JSON.stringify([...kept]);
    // A job stays listed when this ingest saw it, or its unit was kept as it was.
    const dropped = db
      .prepare(
        `UPDATE jobs SET in_manifest = 0 WHERE in_manifest = 1 AND seen <> ?
           AND (unit IS NULL OR unit NOT IN (SELECT value FROM json_each(?)))`,
      )
      .run(gen, keptJson).changes;
    const listedKeys = JSON.stringify(units.map((unit) => unit.key));
    db.prepare('DELETE FROM unit_files WHERE unit NOT IN (SELECT value FROM json_each(?))').run(listedKeys);
    db.prepare('DELETE FROM units WHERE key NOT IN (SELECT value FROM json_each(?))').run(listedKeys);
    const upsert = db.prepare(
      `INSERT INTO units (key, position, fingerprint, gen, jobs, read_at) VALUES (@key, @position, @fingerprint, @gen, @jobs, @now)
       ON CONFLICT (key) DO UPDATE SET position = excluded.position, fingerprint = excluded.fingerprint, gen = excluded.gen,
         jobs = excluded.jobs, read_at = excluded.read_at`,
    );
    for (const unit of units) {
      if (kept.has(unit.key)) continue;
      // A unit read again without a row or a file of its own keeps no files from its last reading.
      if (!started.has(unit.key)) deleteUnitFiles.run(unit.key);
      upsert.run({ ...unit, gen, jobs: started.get(unit.key) ?? 0, now });
    }
    // Inserts are counted here, not by a trigger (schema.ts, migration 9); updates count themselves.
    if (added > 0) db.prepare("UPDATE counters SET value = value + ? WHERE name = 'jobs_written'").run(added);
    writeSteps(db);
    const listed = (db.prepare('SELECT COUNT(*) AS n FROM jobs WHERE in_manifest = 1').get() as { n: number }).n;
    const result: SyncResult = { added, changed, dropped, listed };
    ctx.insertEvent(null, 'synced', null, null, { ...result, read: [...started.keys()], kept: [...kept] }, now);
    return result;
  };

  return {
    keep: (unitKey) => {
      assertOpen();
      kept.add(unitKey);
    },
    claim: (unitKey, claims) => {
      assertOpen();
      start(unitKey);
      const conflicts: IdConflict[] = [];
      for (const { id, origin } of claims) {
        const { conflict } = conflictOf(id, origin);
        if (conflict !== undefined) conflicts.push(conflict);
        else {
          insertClaim.run(id, origin);
          claimed += 1;
        }
      }
      return conflicts;
    },
    put: (unitKey, specs) => {
      assertOpen();
      start(unitKey);
      const now = ctx.nowIso();
      const result: PutResult = { conflicts: [], changed: [], moved: [] };
      for (const spec of specs) putOne(unitKey, spec, now, result);
      started.set(unitKey, (started.get(unitKey) ?? 0) + specs.length - result.conflicts.length);
      return result;
    },
    putUnitFiles: (unitKey, files) => {
      assertOpen();
      start(unitKey);
      for (const file of files) insertUnitFile.run(unitKey, file.path, file.stamp);
    },
    commit: (units) => {
      assertOpen();
      const result = finish(units);
      db.exec('COMMIT');
      open = false;
      return result;
    },
    rollback: () => {
      if (!open) return;
      open = false;
      // As in beginIngest: SQLite may have rolled back already.
      if (db.inTransaction) db.exec('ROLLBACK');
    },
  };
}
