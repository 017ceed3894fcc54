import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { LocalIoError } from '../../src/errors.js';
import { openSqliteLedger, SCHEMA_VERSION } from '../../src/store/index.js';
import { seed, useTempLedgers } from './helpers.js';

/** Raw reads of the file's own settings: what the interface deliberately does not show. */
function rawPragma(path: string, pragma: string): unknown {
  const db = new Database(path, { readonly: true });
  try {
    return db.pragma(pragma, { simple: true });
  } finally {
    db.close();
  }
}

async function openError(path: string, readonly = false): Promise<LocalIoError> {
  try {
    await (await openSqliteLedger(path, { mode: readonly ? 'read-only' : 'read-write' })).close();
  } catch (error) {
    expect(error).toBeInstanceOf(LocalIoError);
    return error as LocalIoError;
  }
  throw new Error(`expected opening ${path} to fail`);
}

describe('openSqliteLedger', () => {
  const t = useTempLedgers();

  it('creates the schema on an empty file and keeps the data on re-open', async () => {
    const first = await t.open();
    await seed(first, { a: 1_000_000 });
    await first.close();
    expect(rawPragma(first.location, 'user_version')).toBe(SCHEMA_VERSION);
    expect(rawPragma(first.location, 'journal_mode')).toBe('wal');

    const again = await t.open();
    expect((await again.getJob('a'))?.priceMicro).toBe(1_000_000);
    expect(rawPragma(again.location, 'user_version')).toBe(SCHEMA_VERSION);
  });

  it('refuses a file written by a newer mediabatch', async () => {
    const path = join(t.dir(), 'newer.db');
    await (await openSqliteLedger(path, { mode: 'read-write' })).close();
    const db = new Database(path);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();

    const error = await openError(path);
    expect(error.code).toBe('E_LEDGER_NEWER');
    expect(error.message).toBe(
      `ledger ${path} was written by a newer mediabatch (schema version ${SCHEMA_VERSION + 1}, this one knows up to ${SCHEMA_VERSION}): upgrade mediabatch to use it`,
    );
  });

  it('refuses a file that is not SQLite, naming it and what moving it aside costs', async () => {
    const path = join(t.dir(), 'garbage.db');
    writeFileSync(path, 'this is not a database, it is a shopping list\n'.repeat(200));

    const error = await openError(path);
    expect(error.code).toBe('E_LEDGER_CORRUPT');
    expect(error.message).toBe(
      `ledger ${path} is not a usable SQLite database (file is not a database): restore it from a backup, or move it aside to start a new ledger, which forgets what was already submitted and paid for`,
    );
    expect(error.message).not.toContain('\n');
    // The garbage is left exactly as it was: nothing was written over it.
    expect(readFileSync(path, 'utf8').startsWith('this is not a database')).toBe(true);
  });

  it('refuses a truncated ledger', async () => {
    const path = join(t.dir(), 'truncated.db');
    const ledger = await openSqliteLedger(path, { mode: 'read-write' });
    await seed(ledger, Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`job-${i}`, 10_000])));
    await ledger.close(); // checkpoints the WAL into the main file
    const size = readFileSync(path).length;
    expect(size).toBeGreaterThan(64 * 1024);
    truncateSync(path, Math.floor(size / 2 / 4096) * 4096);

    const error = await openError(path);
    expect(error.code).toBe('E_LEDGER_CORRUPT');
    expect(error.message).toBe(
      `ledger ${path} is not a usable SQLite database (database disk image is malformed): restore it from a backup, or move it aside to start a new ledger, which forgets what was already submitted and paid for`,
    );
  });

  it('read-only: a truncated ledger is refused by the open or the read that meets the damage', async () => {
    const path = join(t.dir(), 'truncated-read.db');
    const ledger = await openSqliteLedger(path, { mode: 'read-write' });
    await seed(ledger, Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`job-${i}`, 10_000])));
    await ledger.close();
    truncateSync(path, Math.floor(readFileSync(path).length / 2 / 4096) * 4096);

    // No quick_check of the whole file on a read-only open (a million jobs: seconds): SQLite
    // checks each page as a read needs it, and the ledger turns its complaint into the message.
    const error = await (async () => {
      const reader = await openSqliteLedger(path, { mode: 'read-only' });
      try {
        await reader.readJobs({ scope: 'all', limit: 5000 });
      } finally {
        await reader.close();
      }
    })().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(LocalIoError);
    expect((error as LocalIoError).code).toBe('E_LEDGER_CORRUPT');
    expect((error as LocalIoError).message).toMatch(/^ledger .*truncated-read\.db is not a usable SQLite database \(.*\): restore it/);
  });

  it('read-only: a missing file says nothing has been run yet, and nothing is created', async () => {
    const path = join(t.dir(), 'missing.db');
    const error = await openError(path, true);
    expect(error.code).toBe('E_NO_LEDGER');
    expect(error.message).toBe(`no ledger at ${path}: nothing has been run for this manifest yet`);
    expect(() => readFileSync(path)).toThrow();
  });

  it('read-only: reads what a writer committed, and cannot write', async () => {
    const writer = await t.open();
    await seed(writer, { a: 2_000_000 });
    const reader = await t.open(undefined, { mode: 'read-only' });
    expect((await reader.readJobs({ scope: 'all', limit: 10 })).map((j) => j.id)).toEqual(['a']);
    expect(await reader.spentMicro()).toBe(0);
    await expect(reader.setMeta('x', 'y')).rejects.toThrow(/read-only/);
  });

  it('a folder that does not exist is a LocalIoError naming the file', async () => {
    const path = join(t.dir(), 'no-such-folder', 'x.db');
    const error = await openError(path);
    expect(error.code).toBe('E_LEDGER_OPEN');
    expect(error.message).toBe(
      `ledger ${path} cannot be opened (Cannot open database because the directory does not exist): check that the folder exists and is writable`,
    );
  });
});
