import { describe, expect, it } from 'vitest';
import { canTransition, JOB_STATES, type JobState, type Ledger } from '../../../src/store/index.js';
import type { Ledgers } from '../ledger-contract.js';
import { done, expectBug, reach, SEND, seed } from './fixtures.js';
import { eventsFor } from '../../support/events.js';

const PRICE = 250_000;

interface Case {
  from: JobState;
  act: (l: Ledger) => Promise<unknown>;
  to: JobState;
  kind: string;
  spentMicro: number;
  /** What the event's detail holds at least; by default the spend after the change. */
  detail?: object;
}

/** One case for every edge of the table in src/jobs/states.ts, each through the method that takes it. */
const cases: Case[] = [
  { from: 'pending', act: (l) => l.reserveForSubmit('a', 1_000_000, ['pending']), to: 'submitting', kind: 'reserved', spentMicro: PRICE },
  { from: 'pending', act: (l) => l.markSkipped('a', 'budget'), to: 'skipped', kind: 'skipped', spentMicro: 0 },
  { from: 'skipped', act: (l) => l.reserveForSubmit('a', 1_000_000, ['skipped']), to: 'submitting', kind: 'reserved', spentMicro: PRICE },
  { from: 'submitting', act: (l) => l.markSubmitted('a', 'req-9'), to: 'submitted', kind: 'submitted', spentMicro: PRICE },
  { from: 'submitting', act: (l) => l.markNotTaken('a', '503'), to: 'pending', kind: 'not_taken', spentMicro: 0 },
  { from: 'submitting', act: (l) => l.markRefused('a', '422'), to: 'failed', kind: 'refused', spentMicro: 0 },
  { from: 'submitting', act: (l) => l.markInDoubt('a', 'reset'), to: 'in_doubt', kind: 'in_doubt', spentMicro: PRICE },
  { from: 'submitting', act: (l) => l.recoverInterrupted(), to: 'in_doubt', kind: 'recovered', spentMicro: PRICE },
  { from: 'submitted', act: (l) => l.markDone('a', done), to: 'done', kind: 'done', spentMicro: PRICE },
  {
    from: 'submitted',
    act: (l) => l.markFailedRemote('a', { reason: 'nsfw', retryable: false, refunded: false }),
    to: 'failed',
    kind: 'failed',
    spentMicro: PRICE,
  },
  {
    from: 'submitted',
    act: (l) => l.markFailedRemote('a', { reason: 'worker died', retryable: false, refunded: true }),
    to: 'failed',
    kind: 'failed',
    spentMicro: 0,
  },
  {
    // Refunded and retryable: failed all the same, and sent again by a run (the next case).
    from: 'submitted',
    act: (l) => l.markFailedRemote('a', { reason: 'worker died', retryable: true, refunded: true }),
    to: 'failed',
    kind: 'failed',
    spentMicro: 0,
    detail: { reason: 'worker died', retryable: true, refunded: true, spentMicro: 0 },
  },
  { from: 'failed', act: (l) => l.reserveForSubmit('a', 1_000_000, ['failed']), to: 'submitting', kind: 'reserved', spentMicro: PRICE },
  {
    from: 'submitted',
    act: (l) => l.noteUncollected('a', 'not_collected', 'result over the size limit'),
    to: 'submitted',
    kind: 'not_collected',
    spentMicro: PRICE,
    detail: { reason: 'result over the size limit' },
  },
  { from: 'submitted', act: (l) => l.noteStillRunning('a'), to: 'submitted', kind: 'still_running', spentMicro: PRICE, detail: {} },
  // The first attempt may have been charged: the resend's price comes on top of it.
  { from: 'in_doubt', act: (l) => l.reserveForSubmit('a', 1_000_000, ['in_doubt']), to: 'submitting', kind: 'reserved', spentMicro: 2 * PRICE },
  {
    // run --redo: generated again on purpose. The first result was paid for; the event names it.
    from: 'done',
    act: (l) => l.reserveForSubmit('a', 1_000_000, ['done']),
    to: 'submitting',
    kind: 'reserved',
    spentMicro: 2 * PRICE,
    detail: { carriedMicro: PRICE, earlierResult: { path: done.path, sha256: done.sha256 }, spentMicro: 2 * PRICE },
  },
  { from: 'pending', act: (l) => reach.blocked(l), to: 'blocked', kind: 'blocked', spentMicro: 0, detail: { reason: 'input "up" failed: CONTENT_POLICY' } },
  { from: 'skipped', act: (l) => reach.blocked(l), to: 'blocked', kind: 'blocked', spentMicro: 0 },
  // run --redo up: the input may be sent again, so the job waits as pending for it.
  { from: 'blocked', act: (l) => l.settleBlocked({ ...SEND, redo: ['up'] }), to: 'pending', kind: 'unblocked', spentMicro: 0 },
];

/** Every change of one job, and the states it may start from. */
const changes: { name: string; from: readonly JobState[]; act: (l: Ledger) => Promise<unknown> }[] = [
  { name: 'markSubmitted', from: ['submitting'], act: (l) => l.markSubmitted('a', 'req-x') },
  { name: 'markNotTaken', from: ['submitting'], act: (l) => l.markNotTaken('a', '503') },
  { name: 'markRefused', from: ['submitting'], act: (l) => l.markRefused('a', '422') },
  { name: 'markInDoubt', from: ['submitting'], act: (l) => l.markInDoubt('a', 'reset') },
  { name: 'markDone', from: ['submitted'], act: (l) => l.markDone('a', done) },
  { name: 'markFailedRemote', from: ['submitted'], act: (l) => l.markFailedRemote('a', { reason: 'x', retryable: true, refunded: true }) },
  { name: 'noteUncollected', from: ['submitted'], act: (l) => l.noteUncollected('a', 'status_unknown', '404') },
  { name: 'noteStillRunning', from: ['submitted'], act: (l) => l.noteStillRunning('a') },
  { name: 'markSkipped', from: ['pending', 'skipped', 'in_doubt', 'failed', 'done'], act: (l) => l.markSkipped('a', 'over budget') },
];
const refused = changes.flatMap((change) =>
  JOB_STATES.filter((state) => !change.from.includes(state)).map((state) => ({ ...change, state })),
);

export function transitionsContract(ledgers: Ledgers): void {
  describe('state transitions (the table in src/jobs/states.ts)', () => {
    it('has a case for every transition the table allows, and no case the table refuses', () => {
      const allowed = JOB_STATES.flatMap((from) => JOB_STATES.filter((to) => canTransition(from, to)).map((to) => `${from} → ${to}`));
      expect(new Set(cases.map((c) => `${c.from} → ${c.to}`))).toEqual(new Set(allowed));
    });

    it.each(cases)('$from → $to ($kind): row, spend and event change together', async ({ from, act, to, kind, spentMicro, detail }) => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: PRICE, other: 1_000_000 });
      await reach[from](ledger);
      expect((await ledger.getJob('a'))?.state).toBe(from);
      const eventsBefore = (await eventsFor(ledger, 'a')).length;

      await act(ledger);

      const row = await ledger.getJob('a');
      expect(row?.state).toBe(to);
      expect(row?.spentMicro).toBe(spentMicro);
      expect(await ledger.spentMicro()).toBe(spentMicro);
      const events = await eventsFor(ledger, 'a');
      expect(events).toHaveLength(eventsBefore + 1);
      expect(events.at(-1)).toMatchObject({ jobId: 'a', kind, fromState: from, toState: to, detail: detail ?? { spentMicro } });
    });

    it.each(refused)('$name from $state is refused as a bug and changes nothing', async ({ state, act }) => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: PRICE });
      await reach[state](ledger);
      const before = { row: await ledger.getJob('a'), events: await eventsFor(ledger, 'a'), spent: await ledger.spentMicro() };
      await expectBug(act(ledger), 'a');
      expect({ row: await ledger.getJob('a'), events: await eventsFor(ledger, 'a'), spent: await ledger.spentMicro() }).toEqual(before);
    });

    it.each(['submitting', 'submitted', 'done', 'failed'] as const)('a job %s cannot be reserved: wrong-state, nothing changed', async (state) => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: PRICE });
      await reach[state](ledger);
      const before = { row: await ledger.getJob('a'), events: await eventsFor(ledger, 'a') };
      expect(await ledger.reserveForSubmit('a', null, ['pending', 'skipped', 'in_doubt'])).toBe('wrong-state');
      expect({ row: await ledger.getJob('a'), events: await eventsFor(ledger, 'a') }).toEqual(before);
    });

    it('a change for a job the ledger does not hold is refused as a bug', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: PRICE });
      await expectBug(ledger.markSubmitted('nope', 'r'), 'nope');
      await expectBug(ledger.reserveForSubmit('nope', null, ['pending']), 'nope');
      expect(await ledger.getJob('nope')).toBeUndefined();
    });

    it('keeps the request id, result and attempts on the row', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: PRICE });
      await reach.done(ledger);
      const row = await ledger.getJob('a');
      expect(row).toMatchObject({
        state: 'done',
        requestId: 'req-1',
        attempts: 1,
        resultPath: done.path,
        resultBytes: done.bytes,
        resultSha256: done.sha256,
        lastError: null,
      });
      expect(row?.submittedAt).not.toBeNull();
      expect(row?.finishedAt).not.toBeNull();
    });

    it('a request id the service already gave another job puts the later job in doubt; the first keeps it', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: PRICE, b: 1_000_000 });
      await reach.done(ledger);
      expect(await ledger.reserveForSubmit('b', null, ['pending'])).toBe('reserved');
      expect(await ledger.markSubmitted('b', 'req-1')).toEqual({ conflictWith: 'a' });
      expect(await ledger.getJob('b')).toMatchObject({ state: 'in_doubt', requestId: null, spentMicro: 1_000_000 });
      expect((await ledger.getJob('b'))?.lastError).toBe(
        'the service answered request id req-1, which it had already given to job "a": whether it took this job cannot be known',
      );
      expect((await eventsFor(ledger, 'b')).at(-1)).toMatchObject({ kind: 'request_id_conflict', detail: { requestId: 'req-1', heldBy: 'a' } });
      expect(await ledger.getJob('a')).toMatchObject({ state: 'done', requestId: 'req-1' });
    });

    it.each(['failed', 'done'] as const)('markSkipped leaves a %s job a run meant to send again where it is, with a note', async (state) => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: PRICE });
      await reach[state](ledger);
      const before = await ledger.getJob('a');
      await ledger.markSkipped('a', 'the budget was reached during the run');
      expect(await ledger.getJob('a')).toEqual(before);
      expect((await eventsFor(ledger, 'a')).at(-1)).toMatchObject({ kind: 'not_sent', fromState: state, toState: state, detail: { reason: 'the budget was reached during the run' } });
    });

    it('markSkipped leaves skipped and in_doubt jobs where they are, with a note', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: PRICE, b: 1_000_000 });
      await reach.in_doubt(ledger);
      await ledger.markSkipped('a', 'the budget was reached during the run');
      expect(await ledger.getJob('a')).toMatchObject({ state: 'in_doubt', spentMicro: PRICE });
      expect((await eventsFor(ledger, 'a')).at(-1)).toMatchObject({ kind: 'not_sent', fromState: 'in_doubt', toState: 'in_doubt' });

      await ledger.markSkipped('b', 'over budget');
      await ledger.markSkipped('b', 'over budget again');
      expect((await ledger.getJob('b'))?.state).toBe('skipped');
    });

    it('a failure that was not refunded stays failed, its price counted: nothing sends it again', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: PRICE });
      await reach.submitted(ledger);
      await ledger.markFailedRemote('a', { reason: 'bad output', retryable: true, refunded: false });
      expect(await ledger.getJob('a')).toMatchObject({ state: 'failed', spentMicro: PRICE });
      expect(await ledger.reserveForSubmit('a', null, ['pending', 'skipped', 'in_doubt'])).toBe('wrong-state');
      expect(await ledger.spentMicro()).toBe(PRICE);
    });

    it('recoverInterrupted turns every submitting job into in_doubt and keeps its price spent', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 1_000_000, b: 2_000_000, c: 4_000_000 });
      await ledger.reserveForSubmit('a', null, ['pending']);
      await ledger.reserveForSubmit('c', null, ['pending']);
      expect(await ledger.recoverInterrupted()).toEqual(['a', 'c']);
      expect(await ledger.countsByState()).toEqual({ pending: 1, submitting: 0, submitted: 0, done: 0, failed: 0, in_doubt: 2, skipped: 0, blocked: 0 });
      expect(await ledger.spentMicro()).toBe(5_000_000);
      expect((await eventsFor(ledger, 'c')).at(-1)).toMatchObject({
        kind: 'recovered',
        fromState: 'submitting',
        toState: 'in_doubt',
        detail: { reason: 'crashed while submitting' },
      });
      expect(await ledger.recoverInterrupted()).toEqual([]);
    });

    it('a crash after a reservation leaves the job submitting, never pending: the next run finds it in doubt, its price counted', async () => {
      const crashed = await ledgers.create();
      await seed(crashed, { a: 1_000_000, b: 2_000_000 });
      expect(await crashed.reserveForSubmit('a', null, ['pending'])).toBe('reserved');
      // The run dies here: the request may have left, and no answer is ever recorded.
      const next = await ledgers.reopen(crashed);
      expect(await next.getJob('a')).toMatchObject({ state: 'submitting', spentMicro: 1_000_000 });
      expect(await next.recoverInterrupted()).toEqual(['a']);
      expect(await next.getJob('a')).toMatchObject({ state: 'in_doubt', spentMicro: 1_000_000, lastError: 'crashed while submitting: the service may have taken it' });
      expect(await next.spentMicro()).toBe(1_000_000);
      // In doubt is never sent again unless asked for.
      expect(await next.reserveForSubmit('a', null, ['pending', 'skipped'])).toBe('wrong-state');
    });
  });
}
