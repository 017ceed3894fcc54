import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { done, reach } from './contract/fixtures.js';
import { seed, useTempLedgers } from './helpers.js';
import { eventsFor } from '../support/events.js';

const PRICE = 250_000;

/** What the SQLite ledger says when a change is refused, and what only its file can show. */
describe('SQLite ledger: state changes', () => {
  const t = useTempLedgers();

  it('names the job, the states and what is allowed when it refuses a change', async () => {
    const ledger = await t.open();
    await seed(ledger, { a: PRICE });
    await reach.done(ledger);
    await expect(ledger.markDone('a', done)).rejects.toThrow('bug in mediabatch: job "a" cannot be done from done (only from submitted)');
    await expect(ledger.markFailedRemote('a', { reason: 'x', retryable: true, refunded: true })).rejects.toThrow(
      'bug in mediabatch: job "a" cannot be failed remotely from done (only from submitted)',
    );
    await expect(ledger.markSubmitted('nope', 'r')).rejects.toThrow('bug in mediabatch: job "nope" is not in the ledger (submitted)');
    expect((await ledger.getJob('a'))?.state).toBe('done');
  });

  it('a state change whose event cannot be written is rolled back with it', async () => {
    const ledger = await t.open();
    await seed(ledger, { a: PRICE });
    await reach.submitted(ledger);
    const events = (await eventsFor(ledger, 'a')).length;
    // Raw SQL on purpose: the file is broken from outside, as a full disk would half-way
    // through a transaction, which nothing in the Ledger interface can do.
    const raw = new Database(ledger.location);
    raw.exec(`CREATE TRIGGER refuse_done BEFORE INSERT ON events WHEN NEW.kind = 'done'
              BEGIN SELECT RAISE(ABORT, 'disk full (simulated)'); END`);
    raw.close();

    await expect(ledger.markDone('a', done)).rejects.toThrow('disk full (simulated)');
    expect(await ledger.getJob('a')).toMatchObject({ state: 'submitted', resultPath: null, spentMicro: PRICE });
    expect(await eventsFor(ledger, 'a')).toHaveLength(events);
  });

  it('the event log refuses to be rewritten, whoever asks', async () => {
    const ledger = await t.open();
    await seed(ledger, { a: PRICE });
    await reach.submitted(ledger);
    // Raw SQL on purpose: the interface has no way to change an event; the file itself refuses.
    const raw = new Database(ledger.location);
    try {
      expect(() => raw.prepare("UPDATE events SET kind = 'done'").run()).toThrow('events are append-only');
      expect(() => raw.prepare('DELETE FROM events').run()).toThrow('events are append-only');
    } finally {
      raw.close();
    }
  });
});
