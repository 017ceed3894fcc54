import { describe, expect, it } from 'vitest';
import { spec, seed, useTempLedgers } from './helpers.js';

describe('syncJobs and setPrices', () => {
  const t = useTempLedgers();

  it('adds new jobs as pending in manifest order and follows reordering', () => {
    const ledger = t.open();
    expect(ledger.syncJobs([spec('b', 0), spec('a', 1)])).toEqual({ added: 2, changed: [] });
    expect(ledger.listJobs().map((j) => [j.id, j.state, j.manifestIndex])).toEqual([
      ['b', 'pending', 0],
      ['a', 'pending', 1],
    ]);
    expect(ledger.syncJobs([spec('a', 0), spec('c', 1), spec('b', 2)])).toEqual({ added: 1, changed: [] });
    expect(ledger.listJobs().map((j) => j.id)).toEqual(['a', 'c', 'b']);
    expect(ledger.getJob('a')).toMatchObject({ type: 'txt2audio', textChars: 1, spentUsd: 0, attempts: 0 });
  });

  it('takes new content for unsent jobs and reports sent ones that changed', () => {
    const ledger = t.open();
    seed(ledger, { pend: 1, skip: 1, sent: 1 });
    ledger.markSkipped('skip', 'over budget');
    ledger.reserveForSubmit('sent', null, ['pending']);
    ledger.markSubmitted('sent', 'req-1');

    const result = ledger.syncJobs([spec('pend', 0, 'new-p'), spec('skip', 1, 'new-s'), spec('sent', 2, 'new-x')]);

    expect(result).toEqual({ added: 0, changed: [{ id: 'sent', oldHash: 'hash-sent', newHash: 'new-x', state: 'submitted' }] });
    // Nothing was paid for the unsent ones: they take the new content and must be priced again.
    expect(ledger.getJob('pend')).toMatchObject({ contentHash: 'new-p', priceUsd: null, state: 'pending' });
    expect(ledger.getJob('skip')).toMatchObject({ contentHash: 'new-s', priceUsd: null, state: 'skipped' });
    expect(ledger.getJob('sent')).toMatchObject({ contentHash: 'hash-sent', priceUsd: 1, state: 'submitted' });
    expect(ledger.eventsFor('pend').at(-1)).toMatchObject({ kind: 'content_changed', detail: { newHash: 'new-p' } });
  });

  it('reads every outcome in manifest order, as reports show them', () => {
    const ledger = t.open();
    seed(ledger, { sent: 0.5, refused: 0.25, done: 1, idle: 2 });
    for (const id of ['sent', 'refused', 'done']) ledger.reserveForSubmit(id, null, ['pending']);
    ledger.markSubmitted('sent', 'req-s');
    ledger.markRefused('refused', 'no such voice');
    ledger.markSubmitted('done', 'req-d');
    ledger.markDone('done', { path: '/out/done.mp3', bytes: 3, sha256: 'abc' });
    ledger.syncJobs([spec('idle', 0), spec('done', 1), spec('refused', 2), spec('sent', 3)]);

    expect(ledger.jobOutcomes()).toEqual([
      { id: 'idle', type: 'txt2audio', model: null, priceSource: 'quoted', state: 'pending', requestId: null, priceUsd: 2, output: null, error: null, issue: null },
      { id: 'done', type: 'txt2audio', model: null, priceSource: 'quoted', state: 'done', requestId: 'req-d', priceUsd: 1, output: '/out/done.mp3', error: null, issue: null },
      { id: 'refused', type: 'txt2audio', model: null, priceSource: 'quoted', state: 'failed', requestId: null, priceUsd: 0.25, output: null, error: 'no such voice', issue: null },
      { id: 'sent', type: 'txt2audio', model: null, priceSource: 'quoted', state: 'submitted', requestId: 'req-s', priceUsd: 0.5, output: null, error: null, issue: null },
    ]);
  });

  it('sets prices and sources, and refuses a price for an unknown job without half-applying', () => {
    const ledger = t.open();
    ledger.syncJobs([spec('a', 0), spec('b', 1)]);
    ledger.setPrices([{ id: 'a', priceUsd: 0.5, source: 'derived', priceKey: 'k1' }]);
    expect(ledger.getJob('a')).toMatchObject({ priceUsd: 0.5, priceSource: 'derived', priceKey: 'k1' });
    expect(() =>
      ledger.setPrices([
        { id: 'b', priceUsd: 1, source: 'quoted', priceKey: 'k2' },
        { id: 'ghost', priceUsd: 1, source: 'quoted', priceKey: 'k3' },
      ]),
    ).toThrow('bug in mediabatch: a price was set for job "ghost", which is not in the ledger');
    expect(ledger.getJob('b')?.priceUsd).toBeNull();
  });

  it('syncs 10,000 jobs in one transaction and again as a no-op', () => {
    const ledger = t.open();
    const specs = Array.from({ length: 10_000 }, (_, i) => spec(`job-${i}`, i));
    expect(ledger.syncJobs(specs).added).toBe(10_000);
    expect(ledger.syncJobs(specs)).toEqual({ added: 0, changed: [] });
    expect(ledger.countsByState().pending).toBe(10_000);
    expect(ledger.listJobs()[9_999]?.id).toBe('job-9999');
    expect(ledger.jobsInState('pending')).toHaveLength(10_000);
  });
});
