import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { JOB_TYPES } from '../../src/jobs/index.js';
import { SCHEMA_VERSION } from '../../src/store/index.js';
import { MIGRATIONS } from '../../src/store/sqlite/schema.js';
import { spec, sync, useTempLedgers } from './helpers.js';
import { eventsFor } from '../support/events.js';

/**
 * A ledger as mediabatch wrote it before money was counted in micro-dollars (schema version 4),
 * made with that version's own migrations and rows: raw SQL on purpose, since no code of this
 * version writes that schema.
 */
function writeVersion4(path: string): void {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  for (const migration of MIGRATIONS.filter((m) => m.version <= 4)) db.exec(migration.sql);
  db.pragma('user_version = 4');
  const insert = db.prepare(
    `INSERT INTO jobs (id, manifest_index, content_hash, type, params_json, state, price_usd, spent_usd, carried_usd, request_id, created_at, updated_at)
     VALUES (?, ?, 'h', 'txt2audio', '{}', ?, ?, ?, ?, ?, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')`,
  );
  insert.run('noise', 0, 'done', 0.1 + 0.2, 0.1 + 0.2, 0, 'req-1'); // 0.30000000000000004: noise, 300000
  insert.run('tiny', 1, 'submitted', 7.7e-7, 7.7e-7, 0, 'req-2'); // below a micro-dollar: rounds up to 1
  insert.run('resent', 2, 'in_doubt', 0.0077, 0.0154, 0.0077, null);
  insert.run('unpriced', 3, 'pending', null, 0, 0, null);
  insert.run('odd', 4, 'skipped', 0.0000015, 0, 0, null); // 1.5 µUSD: up to 2
  db.prepare("INSERT INTO events (at, job_id, kind, detail_json) VALUES ('2025-01-01T00:00:00.000Z', 'noise', 'done', '{\"spentUsd\":0.3}')").run();
  db.prepare('INSERT INTO prices (key, price_usd, source, created_at) VALUES (?, 7.7e-7, ?, ?)').run('rate', 'derived', new Date().toISOString());
  db.close();
}

describe('SQLite ledger: migration to micro-dollars (schema version 5)', () => {
  const t = useTempLedgers();

  it('turns dollars into whole micro-dollars, prices and spend rounded up, and keeps the spend total', async () => {
    const path = join(t.dir(), 'old.mediabatch.db');
    writeVersion4(path);
    const ledger = await t.open('old.mediabatch.db');
    const row = async (id: string) => {
      const job = await ledger.getJob(id);
      return [job?.priceMicro, job?.spentMicro, job?.state];
    };
    expect(await row('noise')).toEqual([300_000, 300_000, 'done']);
    expect(await row('tiny')).toEqual([1, 1, 'submitted']);
    expect(await row('resent')).toEqual([7_700, 15_400, 'in_doubt']);
    expect(await row('unpriced')).toEqual([null, 0, 'pending']);
    expect(await row('odd')).toEqual([2, 0, 'skipped']);
    expect(await ledger.spentMicro()).toBe(300_000 + 1 + 15_400);
    // What an in-doubt job's earlier attempt may have cost is carried through: released, it stays.
    expect(await ledger.reserveForSubmit('resent', null, ['in_doubt'])).toBe('reserved');
    await ledger.markNotTaken('resent', '503');
    expect((await ledger.getJob('resent'))?.spentMicro).toBe(15_400);
    // Old events keep their dollars; the cache keeps its fractions of a micro-dollar.
    expect((await eventsFor(ledger, 'noise'))[0]?.detail).toEqual({ spentUsd: 0.3 });
    expect((await ledger.getPrices(60_000)).get('rate')?.priceUsd).toBe(7.7e-7);
    await ledger.close();

    const raw = new Database(path, { readonly: true });
    try {
      expect(raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(raw.pragma('foreign_key_check')).toEqual([]);
      const columns = raw.prepare<[], { name: string; type: string }>('SELECT name, type FROM pragma_table_info(\'jobs\')').all();
      expect(columns.filter((c) => /_(usd|micro)$/.test(c.name))).toEqual([
        { name: 'price_micro', type: 'INTEGER' },
        { name: 'spent_micro', type: 'INTEGER' },
        { name: 'carried_micro', type: 'INTEGER' },
      ]);
    } finally {
      raw.close();
    }
  });

  it.each(['made now', 'migrated from version 4'])(
    'keeps the lists of kinds and states out of the schema of a ledger %s: a new kind needs no migration, an unknown state is refused',
    async (made) => {
      // A version 4 ledger has migration 1's CHECK on the type; migration 5 rebuilt the table without it.
      if (made !== 'made now') writeVersion4(join(t.dir(), 'old.mediabatch.db'));
      const ledger = await t.open(made === 'made now' ? undefined : 'old.mediabatch.db');
      // A kind no version knows yet: the code's registry checks kinds, not the file.
      await sync(ledger, [{ ...spec('later', 0), type: 'img-upscale' as 'txt2audio' }]);
      expect((await ledger.getJob('later'))?.type).toBe('img-upscale');
      // Raw SQL on purpose: the interface cannot write a state outside src/jobs/states.ts.
      const raw = new Database(ledger.location);
      try {
        const schema = raw.prepare<[], string>('SELECT sql FROM sqlite_master WHERE sql IS NOT NULL').pluck().all().join('\n');
        expect(JOB_TYPES.filter((type) => schema.includes(type))).toEqual([]);
        raw.pragma('foreign_keys = ON');
        expect(raw.prepare('SELECT name FROM job_states ORDER BY name').pluck().all()).toEqual(
          ['blocked', 'done', 'failed', 'in_doubt', 'pending', 'skipped', 'submitted', 'submitting'],
        );
        expect(() => raw.prepare("UPDATE jobs SET state = 'lost' WHERE id = 'later'").run()).toThrow(/FOREIGN KEY constraint failed/);
      } finally {
        raw.close();
      }
    },
  );
});

describe('SQLite ledger: who inserts jobs (schema.ts, migration 9)', () => {
  it('the ingest alone, never with a spend: it counts its inserts for jobsVersion, and no trigger counts them', () => {
    const sqliteDir = join(import.meta.dirname, '../../src/store/sqlite');
    const inserting = readdirSync(sqliteDir)
      .filter((name) => name.endsWith('.ts') && name !== 'schema.ts')
      .filter((name) => /INSERT\s+(OR\s+\w+\s+)?INTO\s+jobs\b/i.test(readFileSync(join(sqliteDir, name), 'utf8')));
    expect(inserting).toEqual(['ingest.ts']);
    const ingest = readFileSync(join(sqliteDir, 'ingest.ts'), 'utf8');
    const columns = /INSERT INTO jobs \(([^)]*)\)/.exec(ingest)?.[1] ?? '';
    expect(columns).toContain('manifest_index');
    expect(columns).not.toMatch(/spent|carried/);
  });

  it('a fresh ledger has no trigger on inserts into jobs', () => {
    const db = new Database(':memory:');
    for (const migration of MIGRATIONS) db.exec(migration.sql);
    const triggers = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'jobs'").all() as { name: string; sql: string }[];
    expect(triggers.map((t) => t.name).sort()).toEqual(['jobs_written_on_delete', 'jobs_written_on_update', 'spend_on_delete', 'spend_on_update']);
    expect(triggers.filter((t) => /AFTER INSERT|BEFORE INSERT|INSTEAD OF INSERT/i.test(t.sql))).toEqual([]);
    db.close();
  });
});

describe('SQLite ledger: migration to pipelines (schema version 11)', () => {
  const t = useTempLedgers();

  it('a version 10 ledger keeps its jobs, which take no inputs (step 1, priced exactly), and takes references and blocked jobs after', async () => {
    const path = join(t.dir(), 'old.mediabatch.db');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    for (const migration of MIGRATIONS.filter((m) => m.version <= 10)) db.exec(migration.sql);
    db.pragma('user_version = 10');
    db.prepare("INSERT INTO job_states (name) VALUES ('pending'), ('failed')").run();
    db.prepare(
      `INSERT INTO jobs (id, manifest_index, content_hash, type, params_json, state, price_micro, price_key, group_key, unit, seen, origin,
         last_error, created_at, updated_at)
       VALUES ('poster', 0, 'hash-poster', 'txt2audio', '{}', 'failed', 5, 'k-poster', 'g-poster', 'jobs', 1, 'm.yaml:1:5', 'NSFW', 'x', 'x')`,
    ).run();
    db.close();

    const ledger = await t.open('old.mediabatch.db');
    expect(await ledger.getJob('poster')).toMatchObject({ state: 'failed', inputs: null, priceBound: false, step: 1 });
    await sync(ledger, [{ ...spec('poster', 0), contentHash: 'hash-poster' }, { ...spec('talk', 1), inputs: [{ field: 'text', from: 'poster', origin: 'm.yaml:2:9' }] }]);
    expect(await ledger.getJob('talk')).toMatchObject({ inputs: { text: 'poster' }, step: 2 });

    expect(await ledger.settleBlocked({ resubmitInDoubt: false })).toEqual({ blocked: 1, unblocked: 0 });
    expect(await ledger.getJob('talk')).toMatchObject({ state: 'blocked', lastError: 'input "poster" failed: NSFW' });
    await ledger.close();

    const raw = new Database(path, { readonly: true });
    try {
      expect(raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      const plan = raw.prepare("EXPLAIN QUERY PLAN SELECT job_id FROM job_inputs WHERE from_id = 'poster'").all() as { detail: string }[];
      expect(plan.map((step) => step.detail).join('\n')).toContain('job_inputs_from');
    } finally {
      raw.close();
    }
  });
});
