import { describe, expect, it } from 'vitest';
import { seed, useTempLedgers } from './helpers.js';

describe('notes on a paid job left uncollected', () => {
  const t = useTempLedgers();

  it('keep it submitted, with the reason as last_error and the kind as its issue, until it is seen running or done', () => {
    const ledger = t.open();
    seed(ledger, { a: 0.25, b: 0.5 });
    for (const id of ['a', 'b']) {
      ledger.reserveForSubmit(id, null, ['pending']);
      ledger.markSubmitted(id, `req-${id}`);
    }
    ledger.noteUncollected('a', 'not_collected', 'result refused: over the size limit');
    ledger.noteUncollected('b', 'status_unknown', 'the service does not know request req-b (404)');
    const issues = () => ledger.jobOutcomes().map((o) => [o.id, o.state, o.issue, o.error]);
    expect(issues()).toEqual([
      ['a', 'submitted', 'not_collected', 'result refused: over the size limit'],
      ['b', 'submitted', 'status_unknown', 'the service does not know request req-b (404)'],
    ]);
    // Nothing about the money changes: the job was paid for and its result is still to come.
    expect(ledger.spentUsd()).toBe(0.75);
    expect(ledger.eventsFor('a').at(-1)).toMatchObject({
      kind: 'not_collected',
      fromState: 'submitted',
      toState: 'submitted',
      detail: { reason: 'result refused: over the size limit' },
    });

    ledger.noteStillRunning('b');
    ledger.markDone('a', { path: '/out/a.wav', bytes: 10, sha256: 'ab'.repeat(32) });
    expect(issues()).toEqual([
      ['a', 'done', null, null],
      ['b', 'submitted', null, null],
    ]);
  });

  it('are refused, as a bug, on a job that is not submitted', () => {
    const ledger = t.open();
    seed(ledger, { a: 0.25 });
    expect(() => ledger.noteUncollected('a', 'not_collected', 'x')).toThrow('bug in mediabatch: job "a" is pending, not submitted (not_collected)');
    expect(ledger.eventsFor('a').filter((e) => e.kind === 'not_collected')).toEqual([]);
  });
});
