/**
 * The ledger's schema as an ordered list of migrations. `PRAGMA user_version` holds how many
 * have been applied (each `version` is the one it leaves the file at); a file that claims more
 * than this list has was written by a newer mediabatch and is refused rather than guessed at.
 * Append new migrations; never edit old ones.
 */
const STATES_SQL = "('pending','submitting','submitted','done','failed','in_doubt','skipped')";

export const MIGRATIONS: readonly { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE jobs (
        id             TEXT PRIMARY KEY,
        manifest_index INTEGER NOT NULL,
        content_hash   TEXT NOT NULL,
        type           TEXT NOT NULL CHECK (type IN ('txt2audio','img2video')),
        params_json    TEXT NOT NULL,
        text_chars     INTEGER,
        price_usd      REAL CHECK (price_usd IS NULL OR price_usd >= 0),
        price_source   TEXT,
        price_key      TEXT,
        state          TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ${STATES_SQL}),
        request_id     TEXT,
        attempts       INTEGER NOT NULL DEFAULT 0,
        -- What the ledger believes is committed for this job; the spent total is SUM(spent_usd).
        spent_usd      REAL NOT NULL DEFAULT 0 CHECK (spent_usd >= 0),
        last_error     TEXT,
        result_path    TEXT,
        result_bytes   INTEGER CHECK (result_bytes IS NULL OR result_bytes >= 0),
        result_sha256  TEXT,
        created_at     TEXT NOT NULL,
        updated_at     TEXT NOT NULL,
        submitted_at   TEXT,
        finished_at    TEXT
      ) STRICT;
      CREATE INDEX jobs_by_state ON jobs (state);
      CREATE INDEX jobs_by_manifest_index ON jobs (manifest_index);

      CREATE TABLE events (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        at          TEXT NOT NULL,
        job_id      TEXT REFERENCES jobs (id),
        kind        TEXT NOT NULL,
        from_state  TEXT,
        to_state    TEXT,
        detail_json TEXT
      ) STRICT;
      CREATE INDEX events_by_job ON events (job_id);
      -- The event log is the audit trail of money; nothing may rewrite it.
      CREATE TRIGGER events_no_update BEFORE UPDATE ON events
        BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
      CREATE TRIGGER events_no_delete BEFORE DELETE ON events
        BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;

      CREATE TABLE prices (
        key        TEXT PRIMARY KEY,
        price_usd  REAL NOT NULL CHECK (price_usd >= 0),
        source     TEXT NOT NULL,
        created_at TEXT NOT NULL
      ) STRICT;

      CREATE TABLE catalogue (
        base_url   TEXT PRIMARY KEY,
        fetched_at TEXT NOT NULL,
        json       TEXT NOT NULL
      ) STRICT;

      CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) STRICT;

      CREATE TABLE run_lock (
        id         INTEGER PRIMARY KEY CHECK (id = 1),
        pid        INTEGER NOT NULL,
        host       TEXT NOT NULL,
        started_at TEXT NOT NULL,
        command    TEXT NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 2,
    // The budget check runs before every submit; summing 10,000 rows each time made a run
    // quadratic. Triggers keep one running total in step with every change of spent_usd, in
    // the same transaction, whatever code path writes it.
    sql: `
      CREATE TABLE spend_total (
        id        INTEGER PRIMARY KEY CHECK (id = 1),
        spent_usd REAL NOT NULL
      ) STRICT;
      INSERT INTO spend_total (id, spent_usd) SELECT 1, TOTAL(spent_usd) FROM jobs;
      CREATE TRIGGER spend_on_insert AFTER INSERT ON jobs WHEN NEW.spent_usd <> 0
        BEGIN UPDATE spend_total SET spent_usd = spent_usd + NEW.spent_usd WHERE id = 1; END;
      CREATE TRIGGER spend_on_update AFTER UPDATE OF spent_usd ON jobs WHEN NEW.spent_usd <> OLD.spent_usd
        BEGIN UPDATE spend_total SET spent_usd = spent_usd + NEW.spent_usd - OLD.spent_usd WHERE id = 1; END;
      CREATE TRIGGER spend_on_delete AFTER DELETE ON jobs WHEN OLD.spent_usd <> 0
        BEGIN UPDATE spend_total SET spent_usd = spent_usd - OLD.spent_usd WHERE id = 1; END;
    `,
  },
  {
    version: 3,
    // An in-doubt job sent again may be paid twice: the money its earlier attempts may have
    // cost stays counted (carried) under the new attempt's reservation, and is what remains
    // when the new attempt is released, refused or refunded.
    sql: `
      ALTER TABLE jobs ADD COLUMN carried_usd REAL NOT NULL DEFAULT 0 CHECK (carried_usd >= 0);
    `,
  },
  {
    version: 4,
    // Each request id the service answers is looked up before it is recorded: a service that
    // hands one id to two jobs must not make two jobs share one paid result.
    sql: `
      CREATE INDEX jobs_by_request_id ON jobs (request_id);
    `,
  },
  {
    version: 5,
    // Money in whole micro-dollars (src/money.ts), so sums and the budget check are exact
    // integers: the jobs table is rebuilt with INTEGER price_micro, spent_micro and
    // carried_micro in place of the REAL dollars, and the spend total follows. The dollars
    // convert as usdToMicro(x, 'up') does: x * 1e6 within float noise (1e-3 µUSD) of a whole number
    // is that number, anything else rounds up (a truncation + 1: every amount is >= 0), so a
    // price or a spend is never counted short. The prices cache keeps its REAL dollars: it
    // also holds fitted per-character rates, fractions of a micro-dollar.
    //
    // While the table is rebuilt, its two lists leave the schema: no CHECK on type (the code's
    // registry of job kinds checks them, so a new kind needs no migration), and the states are
    // rows of job_states, which every writable open fills from src/jobs/states.ts, so a new
    // state needs none either. Old events keep their dollar fields; new ones carry spentMicro.
    //
    // The migration runs with foreign keys off (SQLite's procedure for rebuilding a table that
    // others reference) and is checked with foreign_key_check before it commits.
    sql: `
      CREATE TABLE job_states (name TEXT PRIMARY KEY) STRICT;
      INSERT INTO job_states (name) SELECT DISTINCT state FROM jobs;

      CREATE TABLE jobs_micro (
        id             TEXT PRIMARY KEY,
        manifest_index INTEGER NOT NULL,
        content_hash   TEXT NOT NULL,
        type           TEXT NOT NULL,
        params_json    TEXT NOT NULL,
        text_chars     INTEGER,
        price_micro    INTEGER CHECK (price_micro IS NULL OR price_micro >= 0),
        price_source   TEXT,
        price_key      TEXT,
        state          TEXT NOT NULL DEFAULT 'pending' REFERENCES job_states (name),
        request_id     TEXT,
        attempts       INTEGER NOT NULL DEFAULT 0,
        -- What the ledger believes is committed for this job; the spent total is SUM(spent_micro).
        spent_micro    INTEGER NOT NULL DEFAULT 0 CHECK (spent_micro >= 0),
        -- Of spent_micro, what earlier attempts of an in-doubt job sent again may have cost.
        carried_micro  INTEGER NOT NULL DEFAULT 0 CHECK (carried_micro >= 0),
        last_error     TEXT,
        result_path    TEXT,
        result_bytes   INTEGER CHECK (result_bytes IS NULL OR result_bytes >= 0),
        result_sha256  TEXT,
        created_at     TEXT NOT NULL,
        updated_at     TEXT NOT NULL,
        submitted_at   TEXT,
        finished_at    TEXT
      ) STRICT;
      INSERT INTO jobs_micro
        SELECT id, manifest_index, content_hash, type, params_json, text_chars,
          ${microUp('price_usd')}, price_source, price_key, state, request_id, attempts,
          ${microUp('spent_usd')}, ${microUp('carried_usd')},
          last_error, result_path, result_bytes, result_sha256, created_at, updated_at, submitted_at, finished_at
        FROM jobs;
      DROP TABLE jobs;
      ALTER TABLE jobs_micro RENAME TO jobs;
      CREATE INDEX jobs_by_state ON jobs (state);
      CREATE INDEX jobs_by_manifest_index ON jobs (manifest_index);
      CREATE INDEX jobs_by_request_id ON jobs (request_id);

      DROP TABLE spend_total;
      CREATE TABLE spend_total (
        id          INTEGER PRIMARY KEY CHECK (id = 1),
        spent_micro INTEGER NOT NULL
      ) STRICT;
      INSERT INTO spend_total (id, spent_micro) SELECT 1, COALESCE(SUM(spent_micro), 0) FROM jobs;
      CREATE TRIGGER spend_on_insert AFTER INSERT ON jobs WHEN NEW.spent_micro <> 0
        BEGIN UPDATE spend_total SET spent_micro = spent_micro + NEW.spent_micro WHERE id = 1; END;
      CREATE TRIGGER spend_on_update AFTER UPDATE OF spent_micro ON jobs WHEN NEW.spent_micro <> OLD.spent_micro
        BEGIN UPDATE spend_total SET spent_micro = spent_micro + NEW.spent_micro - OLD.spent_micro WHERE id = 1; END;
      CREATE TRIGGER spend_on_delete AFTER DELETE ON jobs WHEN OLD.spent_micro <> 0
        BEGIN UPDATE spend_total SET spent_micro = spent_micro - OLD.spent_micro WHERE id = 1; END;
    `,
  },
  {
    version: 6,
    // Jobs stream through the ledger (a manifest may hold a million): everything a submit sends
    // is kept on the row, so the runner reads its work back in windows instead of holding every
    // job. `units` keeps each unit's fingerprint so an unchanged source is not read again, and
    // `seen` the ingest that last read a row. A dropped job (`in_manifest` 0) that was paid for
    // is still collected. `follow_seq` orders submitted jobs for following them in windows too.
    sql: `
      ALTER TABLE jobs ADD COLUMN unit TEXT;
      ALTER TABLE jobs ADD COLUMN seen INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE jobs ADD COLUMN in_manifest INTEGER NOT NULL DEFAULT 1 CHECK (in_manifest IN (0, 1));
      ALTER TABLE jobs ADD COLUMN origin TEXT;
      ALTER TABLE jobs ADD COLUMN text TEXT;
      ALTER TABLE jobs ADD COLUMN files_json TEXT;
      ALTER TABLE jobs ADD COLUMN tags_json TEXT;
      ALTER TABLE jobs ADD COLUMN group_key TEXT;
      ALTER TABLE jobs ADD COLUMN parent_id TEXT;
      ALTER TABLE jobs ADD COLUMN follow_seq INTEGER;
      ALTER TABLE jobs ADD COLUMN retryable INTEGER CHECK (retryable IS NULL OR retryable IN (0, 1));
      ALTER TABLE jobs ADD COLUMN refunded INTEGER CHECK (refunded IS NULL OR refunded IN (0, 1));
      UPDATE jobs SET follow_seq = rowid WHERE state = 'submitted';

      -- Ids are compared ignoring case (they become file names); they are ASCII, which NOCASE folds.
      CREATE INDEX jobs_by_id_nocase ON jobs (id COLLATE NOCASE);
      CREATE INDEX jobs_following ON jobs (follow_seq) WHERE state = 'submitted';
      -- Every index costs each of a million inserts; counts by state scan the table anyway.
      DROP INDEX jobs_by_state;
      -- Only sent jobs have a request id: a partial index costs nothing for the million that wait.
      DROP INDEX jobs_by_request_id;
      CREATE INDEX jobs_by_request_id ON jobs (request_id) WHERE request_id IS NOT NULL;
      -- The parts of split texts, by the job they are parts of (joins, and that job's id held).
      CREATE INDEX jobs_by_parent ON jobs (parent_id COLLATE NOCASE, id) WHERE parent_id IS NOT NULL;

      CREATE TABLE units (
        key         TEXT PRIMARY KEY,
        position    INTEGER NOT NULL,
        fingerprint TEXT NOT NULL,
        gen         INTEGER NOT NULL,
        jobs        INTEGER NOT NULL,
        read_at     TEXT NOT NULL
      ) STRICT;
      -- Files a unit's rows name (text files, images), as they were when the unit was read.
      CREATE TABLE unit_files (
        unit  TEXT NOT NULL,
        path  TEXT NOT NULL,
        stamp TEXT NOT NULL,
        PRIMARY KEY (unit, path)
      ) STRICT;
      CREATE TABLE counters (
        name  TEXT PRIMARY KEY,
        value INTEGER NOT NULL
      ) STRICT;
      INSERT INTO counters (name, value) VALUES ('ingest', 0);
      INSERT INTO counters (name, value) SELECT 'follow', COALESCE(MAX(follow_seq), 0) FROM jobs;
    `,
  },
  {
    version: 7,
    // Jobs followed by the service's signed webhooks. Each run that sends webhooks has a secret
    // of its own (webhook_runs); a job notes the run that sent it (webhook_jobs), because a
    // delivery the service retries a day later is signed with that run's secret, not the
    // current one. Each delivery id is applied at most once (webhook_deliveries). Tables of
    // their own rather than columns on jobs: the secrets are read by nothing that lists jobs.
    sql: `
      CREATE TABLE webhook_runs (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        secret     TEXT NOT NULL CHECK (length(secret) BETWEEN 32 AND 255),
        created_at TEXT NOT NULL
      ) STRICT;
      CREATE TABLE webhook_jobs (
        job_id TEXT PRIMARY KEY REFERENCES jobs (id),
        run_id INTEGER NOT NULL REFERENCES webhook_runs (id)
      ) STRICT;
      CREATE TABLE webhook_deliveries (
        delivery_id TEXT PRIMARY KEY,
        received_at TEXT NOT NULL,
        event       TEXT NOT NULL,
        job_id      TEXT REFERENCES jobs (id)
      ) STRICT;
    `,
  },
  {
    version: 8,
    // Counts by state and the listings of a summary (the few failed or in doubt among a million)
    // read this covering index instead of the whole table. Windows of a walk in manifest order
    // name jobs_by_manifest_index (jobs.ts, fromSql): the planner would otherwise take this one
    // and sort every matching row for each window. The few submitted jobs a run left a note on
    // (transitions.ts) have an index of their own rather than a row lookup each.
    sql: `
      CREATE INDEX jobs_by_state ON jobs (state, in_manifest, manifest_index);
      CREATE INDEX jobs_noted ON jobs (manifest_index) WHERE state = 'submitted' AND last_error IS NOT NULL;
    `,
  },
  {
    version: 9,
    // A count of every write to a job row: a run's documents written at one count are still
    // true at the same count, so a run that changed nothing need not write a million rows of
    // them again (runner/reports.ts). Updates and deletes are counted by triggers, so that no
    // write path can forget. Inserts are not: any trigger on INSERT, even one whose WHEN never
    // holds, makes SQLite keep a statement journal for each insert inside the ingest's one
    // transaction, and that journal spills to a temporary file (docs/ledger.md, "Statement
    // journals"), several times slower. Jobs are inserted by the ingest alone (schema.test.ts
    // holds it to that), which counts what it inserted when it commits, and never with a spend,
    // so spend_on_insert goes (each writable open recounts the spend anyway, open-database.ts).
    sql: `
      INSERT INTO counters (name, value) VALUES ('jobs_written', 0);
      DROP TRIGGER spend_on_insert;
      CREATE TRIGGER jobs_written_on_update AFTER UPDATE ON jobs
        BEGIN UPDATE counters SET value = value + 1 WHERE name = 'jobs_written'; END;
      CREATE TRIGGER jobs_written_on_delete AFTER DELETE ON jobs
        BEGIN UPDATE counters SET value = value + 1 WHERE name = 'jobs_written'; END;
    `,
  },
  {
    version: 10,
    // Content paid for under one id must not be paid again under another (ids from a row number
    // shift when a row is inserted): the ingest looks each new or changed content up among the
    // jobs that counted a spend. Partial, so the million pending rows an ingest inserts cost it
    // nothing; a reservation adds its row, a refund takes it out.
    sql: `
      CREATE INDEX jobs_paid_by_content ON jobs (content_hash) WHERE spent_micro > 0;
    `,
  },
  {
    version: 11,
    // Pipelines: a field whose value is another job's result. A table of its own, keyed by the
    // job that takes it, with an index on the job it names: a job that becomes done finds its
    // dependents there, and no code holds the graph. `sent_sha256` is the input's result as the
    // job was sent with it (a redone input makes the job "changed after it was submitted").
    // `price_bound`: priced at the catalogue's upper bound until its inputs exist. `step`: its
    // place in the pipeline, for jobs with inputs (a job without any is step 1).
    sql: `
      CREATE TABLE job_inputs (
        job_id      TEXT NOT NULL,
        field       TEXT NOT NULL,
        from_id     TEXT NOT NULL,
        origin      TEXT NOT NULL,
        sent_sha256 TEXT,
        PRIMARY KEY (job_id, field)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX job_inputs_from ON job_inputs (from_id);
      ALTER TABLE jobs ADD COLUMN price_bound INTEGER NOT NULL DEFAULT 0 CHECK (price_bound IN (0, 1));
      ALTER TABLE jobs ADD COLUMN step INTEGER;
    `,
  },
];

/** SQL for usdToMicro(column, 'up') on a REAL dollar column that is NULL or >= 0 (migration 5). */
function microUp(column: string): string {
  return `CASE WHEN ABS(${column} * 1e6 - ROUND(${column} * 1e6)) < 1e-3 THEN CAST(ROUND(${column} * 1e6) AS INTEGER)
            ELSE CAST(${column} * 1e6 AS INTEGER) + 1 END`;
}

export const SCHEMA_VERSION = MIGRATIONS.length;
