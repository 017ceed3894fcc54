import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { JobState, Ledger } from '../../src/store/index.js';
import { seed, useTempLedgers } from './helpers.js';

const PRICE = 0.25;
const done = { path: '/out/a.mp3', bytes: 1234, sha256: 'ab'.repeat(32) };

// Ways to bring job "a" (priced at PRICE) into each state through the public API only.
const reach: Record<JobState, (l: Ledger) => void> = {
  pending: () => {},
  skipped: (l) => l.markSkipped('a', 'over budget'),
  submitting: (l) => expect(l.reserveForSubmit('a', null, ['pending'])).toBe('reserved'),
  submitted: (l) => {
    reach.submitting(l);
    l.markSubmitted('a', 'req-1');
  },
  done: (l) => {
    reach.submitted(l);
    l.markDone('a', done);
  },
  failed: (l) => {
    reach.submitting(l);
    l.markRefused('a', '422 text too long');
  },
  in_doubt: (l) => {
    reach.submitting(l);
    l.markInDoubt('a', 'timeout after the body was sent');
  },
};

interface Case {
  from: JobState;
  act: (l: Ledger) => void;
  to: JobState;
  kind: string;
  spentUsd: number;
}

const cases: Case[] = [
  { from: 'pending', act: (l) => l.reserveForSubmit('a', 1, ['pending']), to: 'submitting', kind: 'reserved', spentUsd: PRICE },
  { from: 'pending', act: (l) => l.markSkipped('a', 'budget'), to: 'skipped', kind: 'skipped', spentUsd: 0 },
  { from: 'skipped', act: (l) => l.unskip('a'), to: 'pending', kind: 'unskipped', spentUsd: 0 },
  { from: 'skipped', act: (l) => l.reserveForSubmit('a', 1, ['skipped']), to: 'submitting', kind: 'reserved', spentUsd: PRICE },
  { from: 'submitting', act: (l) => l.markSubmitted('a', 'req-9'), to: 'submitted', kind: 'submitted', spentUsd: PRICE },
  { from: 'submitting', act: (l) => l.markNotTaken('a', '503'), to: 'pending', kind: 'not_taken', spentUsd: 0 },
  { from: 'submitting', act: (l) => l.markRefused('a', '422'), to: 'failed', kind: 'refused', spentUsd: 0 },
  { from: 'submitting', act: (l) => l.markInDoubt('a', 'reset'), to: 'in_doubt', kind: 'in_doubt', spentUsd: PRICE },
  { from: 'submitting', act: (l) => l.recoverInterrupted(), to: 'in_doubt', kind: 'recovered', spentUsd: PRICE },
  { from: 'submitted', act: (l) => l.markDone('a', done), to: 'done', kind: 'done', spentUsd: PRICE },
  {
    from: 'submitted',
    act: (l) => l.markFailedRemote('a', { reason: 'nsfw', retryable: false, refunded: false }),
    to: 'failed',
    kind: 'failed',
    spentUsd: PRICE,
  },
  {
    from: 'submitted',
    act: (l) => l.markFailedRemote('a', { reason: 'worker died', retryable: false, refunded: true }),
    to: 'failed',
    kind: 'failed',
    spentUsd: 0,
  },
  {
    from: 'submitted',
    act: (l) => l.markFailedRemote('a', { reason: 'worker died', retryable: true, refunded: true }),
    to: 'pending',
    kind: 'failed_retryable',
    spentUsd: 0,
  },
  { from: 'submitted', act: (l) => l.markRefreshed('a', 'result URL expired'), to: 'submitted', kind: 'refreshed', spentUsd: PRICE },
  // The first attempt may have been charged: the resend's price comes on top of it.
  { from: 'in_doubt', act: (l) => l.reserveForSubmit('a', 1, ['in_doubt']), to: 'submitting', kind: 'reserved', spentUsd: 2 * PRICE },
  { from: 'failed', act: (l) => l.requeueFailed('a', 'retryable'), to: 'pending', kind: 'requeued', spentUsd: 0 },
];

describe('state transitions', () => {
  const t = useTempLedgers();

  it.each(cases)('$from → $to ($kind): row, spend and event change together', ({ from, act, to, kind, spentUsd }) => {
    const ledger = t.open();
    seed(ledger, { a: PRICE, other: 1 });
    reach[from](ledger);
    expect(ledger.getJob('a')?.state).toBe(from);
    const eventsBefore = ledger.eventsFor('a').length;

    act(ledger);

    const row = ledger.getJob('a');
    expect(row?.state).toBe(to);
    expect(row?.spentUsd).toBe(spentUsd);
    expect(ledger.spentUsd()).toBe(spentUsd);
    const events = ledger.eventsFor('a');
    expect(events).toHaveLength(eventsBefore + 1);
    expect(events.at(-1)).toMatchObject({ jobId: 'a', kind, fromState: from, toState: to, detail: { spentUsd } });
  });

  it('keeps the request id, result and attempts on the row', () => {
    const ledger = t.open();
    seed(ledger, { a: PRICE });
    reach.done(ledger);
    expect(ledger.getJob('a')).toMatchObject({
      state: 'done',
      requestId: 'req-1',
      attempts: 1,
      resultPath: done.path,
      resultBytes: done.bytes,
      resultSha256: done.sha256,
      lastError: null,
    });
    expect(ledger.getJob('a')?.submittedAt).not.toBeNull();
    expect(ledger.getJob('a')?.finishedAt).not.toBeNull();
  });

  it('refuses an illegal transition as a bug and writes nothing', () => {
    const ledger = t.open();
    seed(ledger, { a: PRICE });
    reach.done(ledger);
    const events = ledger.eventsFor('a').length;
    expect(() => ledger.markDone('a', done)).toThrow(
      'bug in mediabatch: job "a" cannot be done from done (only from submitted)',
    );
    expect(() => ledger.markFailedRemote('a', { reason: 'x', retryable: true, refunded: true })).toThrow(/bug in mediabatch/);
    expect(() => ledger.markSubmitted('nope', 'r')).toThrow('bug in mediabatch: job "nope" is not in the ledger (submitted)');
    expect(ledger.getJob('a')?.state).toBe('done');
    expect(ledger.eventsFor('a')).toHaveLength(events);
  });

  it('a state change whose event cannot be written is rolled back with it', () => {
    const ledger = t.open();
    seed(ledger, { a: PRICE });
    reach.submitted(ledger);
    const events = ledger.eventsFor('a').length;
    // Make the event insert fail from outside, as a full disk would half-way through.
    const raw = new Database(ledger.path);
    raw.exec(`CREATE TRIGGER refuse_done BEFORE INSERT ON events WHEN NEW.kind = 'done'
              BEGIN SELECT RAISE(ABORT, 'disk full (simulated)'); END`);
    raw.close();

    expect(() => ledger.markDone('a', done)).toThrow('disk full (simulated)');
    expect(ledger.getJob('a')).toMatchObject({ state: 'submitted', resultPath: null, spentUsd: PRICE });
    expect(ledger.eventsFor('a')).toHaveLength(events);
  });

  it('a request id the service already gave another job puts the later job in doubt; the first keeps it', () => {
    const ledger = t.open();
    seed(ledger, { a: PRICE, b: 1 });
    reach.done(ledger);
    expect(ledger.reserveForSubmit('b', null, ['pending'])).toBe('reserved');
    expect(ledger.markSubmitted('b', 'req-1')).toEqual({ conflictWith: 'a' });
    expect(ledger.getJob('b')).toMatchObject({ state: 'in_doubt', requestId: null, spentUsd: 1 });
    expect(ledger.getJob('b')?.lastError).toBe(
      'the service answered request id req-1, which it had already given to job "a": whether it took this job cannot be known',
    );
    expect(ledger.eventsFor('b').at(-1)).toMatchObject({ kind: 'request_id_conflict', detail: { requestId: 'req-1', heldBy: 'a' } });
    expect(ledger.getJob('a')).toMatchObject({ state: 'done', requestId: 'req-1' });
  });

  it('the spent total carries no float drift after reservations are released', () => {
    const ledger = t.open();
    seed(ledger, { a: 0.1, b: 0.2, c: 0.3 });
    for (const id of ['a', 'b', 'c']) expect(ledger.reserveForSubmit(id, null, ['pending'])).toBe('reserved');
    expect(ledger.spentUsd()).toBe(0.6);
    for (const id of ['a', 'b', 'c']) ledger.markNotTaken(id, '503');
    expect(ledger.spentUsd()).toBe(0);
    expect(Object.is(ledger.spentUsd(), -0)).toBe(false);
  });

  it('markSkipped leaves skipped and in_doubt rows where they are, with a note', () => {
    const ledger = t.open();
    seed(ledger, { a: PRICE, b: 1 });
    reach.in_doubt(ledger);
    ledger.markSkipped('a', 'the budget was reached during the run');
    expect(ledger.getJob('a')).toMatchObject({ state: 'in_doubt', spentUsd: PRICE });
    expect(ledger.eventsFor('a').at(-1)).toMatchObject({ kind: 'not_sent', fromState: 'in_doubt', toState: 'in_doubt' });

    ledger.markSkipped('b', 'over budget');
    ledger.markSkipped('b', 'over budget again');
    expect(ledger.getJob('b')?.state).toBe('skipped');
  });

  it('will not requeue a failure whose price was not refunded', () => {
    const ledger = t.open();
    seed(ledger, { a: PRICE });
    reach.submitted(ledger);
    ledger.markFailedRemote('a', { reason: 'bad output', retryable: true, refunded: false });
    expect(() => ledger.requeueFailed('a', 'try again')).toThrow(/was not refunded/);
    expect(ledger.getJob('a')?.state).toBe('failed');
  });

  it('recoverInterrupted turns every submitting row into in_doubt and keeps its price spent', () => {
    const path = (() => {
      const ledger = t.open();
      seed(ledger, { a: 1, b: 2, c: 4 });
      ledger.reserveForSubmit('a', null, ['pending']);
      ledger.reserveForSubmit('c', null, ['pending']);
      return ledger.path;
    })();
    // A second handle on the same file stands in for the next run after a crash.
    const next = t.open(path.split('/').pop());
    expect(next.recoverInterrupted()).toEqual(['a', 'c']);
    expect(next.countsByState()).toEqual({
      pending: 1,
      submitting: 0,
      submitted: 0,
      done: 0,
      failed: 0,
      in_doubt: 2,
      skipped: 0,
    });
    expect(next.spentUsd()).toBe(5);
    expect(next.eventsFor('c').at(-1)).toMatchObject({
      kind: 'recovered',
      fromState: 'submitting',
      toState: 'in_doubt',
      detail: { reason: 'crashed while submitting' },
    });
    expect(next.recoverInterrupted()).toEqual([]);
  });
});
