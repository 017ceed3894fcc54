import { describe, expect, it } from 'vitest';
import type { Ledgers } from '../ledger-contract.js';
import { expectBug, ids, seed, spec } from './fixtures.js';

export function jobsContract(ledgers: Ledgers): void {
  describe('syncJobs and setPrices', () => {
    it('adds new jobs as pending in manifest order and follows reordering', async () => {
      const ledger = await ledgers.create();
      expect(await ledger.syncJobs([spec('b', 0), spec('a', 1)])).toEqual({ added: 2, changed: [] });
      expect((await ledger.jobOutcomes()).map((j) => [j.id, j.state])).toEqual([
        ['b', 'pending'],
        ['a', 'pending'],
      ]);
      expect((await ledger.getJob('a'))?.manifestIndex).toBe(1);
      expect(await ledger.syncJobs([spec('a', 0), spec('c', 1), spec('b', 2)])).toEqual({ added: 1, changed: [] });
      expect((await ledger.jobOutcomes()).map((j) => j.id)).toEqual(['a', 'c', 'b']);
      expect(await ledger.getJob('a')).toMatchObject({ type: 'txt2audio', textChars: 1, spentMicro: 0, attempts: 0, manifestIndex: 0 });
    });

    it('takes new content for unsent jobs and reports sent ones that changed', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { pend: 1_000_000, skip: 1_000_000, sent: 1_000_000 });
      await ledger.markSkipped('skip', 'over budget');
      await ledger.reserveForSubmit('sent', null, ['pending']);
      await ledger.markSubmitted('sent', 'req-1');

      const result = await ledger.syncJobs([spec('pend', 0, 'new-p'), spec('skip', 1, 'new-s'), spec('sent', 2, 'new-x')]);

      expect(result).toEqual({ added: 0, changed: [{ id: 'sent', oldHash: 'hash-sent', newHash: 'new-x', state: 'submitted' }] });
      // Nothing was paid for the unsent ones: they take the new content and must be priced again.
      expect(await ledger.getJob('pend')).toMatchObject({ contentHash: 'new-p', priceMicro: null, state: 'pending' });
      expect(await ledger.getJob('skip')).toMatchObject({ contentHash: 'new-s', priceMicro: null, state: 'skipped' });
      expect(await ledger.getJob('sent')).toMatchObject({ contentHash: 'hash-sent', priceMicro: 1_000_000, state: 'submitted' });
      expect((await ledger.eventsFor('pend')).at(-1)).toMatchObject({ kind: 'content_changed', detail: { newHash: 'new-p' } });
    });

    it('reads every outcome in manifest order, as reports show them', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { sent: 500_000, refused: 250_000, done: 1_000_000, idle: 2_000_000 });
      for (const id of ['sent', 'refused', 'done']) await ledger.reserveForSubmit(id, null, ['pending']);
      await ledger.markSubmitted('sent', 'req-s');
      await ledger.markRefused('refused', 'no such voice');
      await ledger.markSubmitted('done', 'req-d');
      await ledger.markDone('done', { path: '/out/done.mp3', bytes: 3, sha256: 'abc' });
      await ledger.syncJobs([spec('idle', 0), spec('done', 1), spec('refused', 2), spec('sent', 3)]);

      const outcome = { type: 'txt2audio', model: null, priceSource: 'quoted', issue: null };
      expect(await ledger.jobOutcomes()).toEqual([
        { ...outcome, id: 'idle', state: 'pending', requestId: null, priceMicro: 2_000_000, output: null, error: null },
        { ...outcome, id: 'done', state: 'done', requestId: 'req-d', priceMicro: 1_000_000, output: '/out/done.mp3', error: null },
        { ...outcome, id: 'refused', state: 'failed', requestId: null, priceMicro: 250_000, output: null, error: 'no such voice' },
        { ...outcome, id: 'sent', state: 'submitted', requestId: 'req-s', priceMicro: 500_000, output: null, error: null },
      ]);
      expect(new Map((await ledger.jobViews()).map((v) => [v.id, v]))).toEqual(
        new Map([
          ['idle', { id: 'idle', type: 'txt2audio', state: 'pending', requestId: null, spentMicro: 0, format: null }],
          ['done', { id: 'done', type: 'txt2audio', state: 'done', requestId: 'req-d', spentMicro: 1_000_000, format: null }],
          ['refused', { id: 'refused', type: 'txt2audio', state: 'failed', requestId: null, spentMicro: 0, format: null }],
          ['sent', { id: 'sent', type: 'txt2audio', state: 'submitted', requestId: 'req-s', spentMicro: 500_000, format: null }],
        ]),
      );
    });

    it('reads the model and the speech format a job was sent with', async () => {
      const ledger = await ledgers.create();
      await ledger.syncJobs([{ ...spec('a', 0), paramsJson: JSON.stringify({ model: 'Kokoro', format: 'wav' }) }]);
      expect((await ledger.jobOutcomes())[0]?.model).toBe('Kokoro');
      expect((await ledger.jobViews())[0]?.format).toBe('wav');
    });

    it('sets prices and sources, and refuses a price for an unknown job without half-applying', async () => {
      const ledger = await ledgers.create();
      await ledger.syncJobs([spec('a', 0), spec('b', 1)]);
      await ledger.setPrices([{ id: 'a', priceMicro: 500_000, source: 'derived', priceKey: 'k1' }]);
      expect(await ledger.getJob('a')).toMatchObject({ priceMicro: 500_000, priceSource: 'derived', priceKey: 'k1' });
      await expect(
        ledger.setPrices([
          { id: 'b', priceMicro: 1_000_000, source: 'quoted', priceKey: 'k2' },
          { id: 'ghost', priceMicro: 1_000_000, source: 'quoted', priceKey: 'k3' },
        ]),
      ).rejects.toThrow('bug in mediabatch: a price was set for job "ghost", which is not in the ledger');
      expect((await ledger.getJob('b'))?.priceMicro).toBeNull();
    });

    it('takes prices only in whole micro-dollars', async () => {
      const ledger = await ledgers.create();
      await ledger.syncJobs([spec('a', 0)]);
      await expectBug(ledger.setPrices([{ id: 'a', priceMicro: 0.5, source: 'quoted', priceKey: 'k' }]), 'a');
      await expectBug(ledger.setPrices([{ id: 'a', priceMicro: -1, source: 'quoted', priceKey: 'k' }]), 'a');
      expect((await ledger.getJob('a'))?.priceMicro).toBeNull();
    });

    it('syncs 10,000 jobs in one go and again as a no-op', async () => {
      const ledger = await ledgers.create();
      const specs = Array.from({ length: 10_000 }, (_, i) => spec(`job-${i}`, i));
      expect((await ledger.syncJobs(specs)).added).toBe(10_000);
      expect(await ledger.syncJobs(specs)).toEqual({ added: 0, changed: [] });
      expect((await ledger.countsByState()).pending).toBe(10_000);
      const outcomes = await ledger.jobOutcomes();
      expect(outcomes).toHaveLength(10_000);
      expect(outcomes[9_999]?.id).toBe('job-9999');
    });
  });

  describe('notes on a paid job left uncollected', () => {
    it('keep it submitted, with the reason as its error and the kind as its issue, until it is seen running or done', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 250_000, b: 500_000 });
      for (const id of ['a', 'b']) {
        await ledger.reserveForSubmit(id, null, ['pending']);
        await ledger.markSubmitted(id, `req-${id}`);
      }
      await ledger.noteUncollected('a', 'not_collected', 'result refused: over the size limit');
      await ledger.noteUncollected('b', 'status_unknown', 'the service does not know request req-b (404)');
      const issues = async () => (await ledger.jobOutcomes()).map((o) => [o.id, o.state, o.issue, o.error]);
      expect(await issues()).toEqual([
        ['a', 'submitted', 'not_collected', 'result refused: over the size limit'],
        ['b', 'submitted', 'status_unknown', 'the service does not know request req-b (404)'],
      ]);
      // Nothing about the money changes: the job was paid for and its result is still to come.
      expect(await ledger.spentMicro()).toBe(750_000);
      expect((await ledger.eventsFor('a')).at(-1)).toMatchObject({
        kind: 'not_collected',
        fromState: 'submitted',
        toState: 'submitted',
        detail: { reason: 'result refused: over the size limit' },
      });

      await ledger.noteStillRunning('b');
      await ledger.markDone('a', { path: '/out/a.wav', bytes: 10, sha256: 'ab'.repeat(32) });
      expect(await issues()).toEqual([
        ['a', 'done', null, null],
        ['b', 'submitted', null, null],
      ]);
    });

    it('are refused, as a bug, on a job that is not submitted', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 250_000 });
      const error = await expectBug(ledger.noteUncollected('a', 'not_collected', 'x'), 'a');
      expect(error.message).toBe('bug in mediabatch: job "a" is pending, not submitted (not_collected)');
      expect((await ledger.eventsFor('a')).filter((e) => e.kind === 'not_collected')).toEqual([]);
    });
  });

  describe('events and commits', () => {
    it('the event log only grows: what was written stays exactly as it was, in order', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 250_000 });
      await ledger.reserveForSubmit('a', null, ['pending']);
      await ledger.markSubmitted('a', 'req-1');
      const earlier = await ledger.eventsFor('a');
      await ledger.recordEvent('a', 'note', { n: 1 });
      await ledger.markDone('a', { path: '/o/a', bytes: 1, sha256: '00' });
      await expectBug(ledger.markDone('a', { path: '/o/a', bytes: 1, sha256: '00' }), 'a');
      const later = await ledger.eventsFor('a');
      expect(later.slice(0, earlier.length)).toEqual(earlier);
      expect(later.slice(earlier.length).map((e) => e.kind)).toEqual(['note', 'done']);
      const order = later.map((e) => e.id);
      expect(order).toEqual([...order].sort((x, y) => x - y));
      expect(new Set(order).size).toBe(order.length);
      expect(later.at(-2)).toMatchObject({ kind: 'note', fromState: null, toState: null, detail: { n: 1 } });
    });

    it('run-level events are read with a null job id', async () => {
      const ledger = await ledgers.create();
      await ledger.syncJobs([spec('a', 0)]);
      await ledger.recordEvent(null, 'manifest_moved', { from: '/a.yaml', to: '/b.yaml' });
      const run = await ledger.eventsFor(null);
      expect(run.map((e) => e.kind)).toEqual(['synced', 'manifest_moved']);
      expect(run.every((e) => e.jobId === null)).toBe(true);
      expect(run.at(-1)?.detail).toEqual({ from: '/a.yaml', to: '/b.yaml' });
    });

    it('reads the whole log in windows, oldest first, each window after the last id of the one before', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 250_000, b: 250_000 });
      await ledger.reserveForSubmit('a', null, ['pending']);
      await ledger.markSubmitted('a', 'req-a');
      await ledger.recordEvent(null, 'note', { n: 1 });
      await ledger.reserveForSubmit('b', null, ['pending']);
      await ledger.markRefused('b', 'no such voice');
      const everything = [...(await ledger.eventsFor(null)), ...(await ledger.eventsFor('a')), ...(await ledger.eventsFor('b'))].sort(
        (x, y) => x.id - y.id,
      );
      expect(everything.length).toBeGreaterThanOrEqual(6);

      const windows: number[][] = [];
      for (let afterId = 0; ; ) {
        const window = await ledger.readEvents({ afterId, limit: 2 });
        if (window.length === 0) break;
        expect(window.length).toBeLessThanOrEqual(2);
        windows.push(window.map((e) => e.id));
        afterId = window.at(-1)!.id;
      }
      expect(windows.flat()).toEqual(everything.map((e) => e.id));
      expect(await ledger.readEvents({ afterId: 0, limit: 1_000 })).toEqual(everything);
      // The window starts after the id given, not at it.
      const third = everything[2]!;
      expect((await ledger.readEvents({ afterId: third.id, limit: 1 }))[0]).toEqual(everything[3]);
      expect(await ledger.readEvents({ afterId: everything.at(-1)!.id, limit: 10 })).toEqual([]);
    });

    it("reads one job's events in windows, and nothing for a job it does not hold", async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 250_000, b: 250_000 });
      for (const id of ['a', 'b']) await ledger.reserveForSubmit(id, null, ['pending']);
      for (const id of ['b', 'a']) await ledger.markSubmitted(id, `req-${id}`);
      await ledger.markDone('a', { path: '/o/a', bytes: 1, sha256: '00' });
      const ofA = await ledger.eventsFor('a');
      expect(ofA.map((e) => e.kind)).toEqual(['reserved', 'submitted', 'done']);

      const first = await ledger.readEvents({ afterId: 0, limit: 2, jobId: 'a' });
      expect(first).toEqual(ofA.slice(0, 2));
      const rest = await ledger.readEvents({ afterId: first.at(-1)!.id, limit: 2, jobId: 'a' });
      expect(rest).toEqual(ofA.slice(2));
      expect(rest.every((e) => e.jobId === 'a')).toBe(true);
      expect(await ledger.readEvents({ afterId: 0, limit: 10, jobId: 'ghost' })).toEqual([]);
    });

    it('a read-only handle reads the log in windows too', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 250_000 });
      await ledger.recordEvent('a', 'note', { text: 'x' });
      const reader = await ledgers.reopen(ledger, { readonly: true });
      const window = await reader.readEvents({ afterId: 0, limit: 100, jobId: 'a' });
      expect(window.map((e) => [e.kind, e.detail])).toEqual([['note', { text: 'x' }]]);
    });

    it('answers each change once it is stored: another handle sees it when the answer comes', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 1_000_000, b: 2_000_000, c: 3_000_000 });
      const other = await ledgers.reopen(ledger, { readonly: true });
      const answers = await Promise.all(['a', 'b', 'c'].map((id) => ledger.reserveForSubmit(id, 3_000_000, ['pending'])));
      expect(answers).toEqual(['reserved', 'reserved', 'over-budget']);
      expect(await other.spentMicro()).toBe(3_000_000);
      expect(await other.countsByState()).toMatchObject({ submitting: 2, pending: 1 });
      await ledger.markSubmitted('a', 'req-a');
      expect(await other.getJob('a')).toMatchObject({ state: 'submitted', requestId: 'req-a' });
    });

    it('a change that fails is refused alone; the others asked for with it still happen', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 1_000_000, b: 1_000_000 });
      const [a, bad, b] = await Promise.allSettled([
        ledger.reserveForSubmit('a', null, ['pending']),
        ledger.markSubmitted('nope', 'req-x'),
        ledger.reserveForSubmit('b', null, ['pending']),
      ]);
      expect(a).toEqual({ status: 'fulfilled', value: 'reserved' });
      expect(b).toEqual({ status: 'fulfilled', value: 'reserved' });
      expect(bad.status).toBe('rejected');
      await expectBug(Promise.reject((bad as PromiseRejectedResult).reason), 'nope');
      expect(((bad as PromiseRejectedResult).reason as Error).message).toBe('bug in mediabatch: job "nope" is not in the ledger (submitted)');
      expect(await ledger.countsByState()).toMatchObject({ submitting: 2 });
    });

    it('close waits for the changes asked for before it', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 1_000_000 });
      const reserved = ledger.reserveForSubmit('a', null, ['pending']);
      const noted = ledger.recordEvent('a', 'note', { n: 1 });
      await ledger.close();
      // Read before awaiting the changes themselves: close alone must have waited for them.
      const after = await ledgers.reopen(ledger, { readonly: true });
      expect((await after.getJob('a'))?.state).toBe('submitting');
      expect((await after.eventsFor('a')).at(-1)).toMatchObject({ kind: 'note', detail: { n: 1 } });
      await expect(reserved).resolves.toBe('reserved');
      await expect(noted).resolves.toBeUndefined();
    });

    it('flush waits for the changes asked for before it, and changes after it still work', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 1_000_000, b: 1_000_000 });
      const other = await ledgers.reopen(ledger, { readonly: true });
      const reserved = ledger.reserveForSubmit('a', null, ['pending']);
      await ledger.flush();
      // Read before awaiting the change itself: flush alone must have waited for it.
      expect((await other.getJob('a'))?.state).toBe('submitting');
      await expect(reserved).resolves.toBe('reserved');
      expect(await ledger.reserveForSubmit('b', null, ['pending'])).toBe('reserved');
      await ledger.markSubmitted('a', 'req-a');
      await ledger.flush();
      await ledger.flush();
      expect(await other.countsByState()).toMatchObject({ submitting: 1, submitted: 1 });
      expect(await other.spentMicro()).toBe(2_000_000);
    });

    it('many jobs at once keep their own outcomes', async () => {
      const ledger = await ledgers.create();
      const jobs = ids(40);
      await seed(ledger, Object.fromEntries(jobs.map((id) => [id, 1_000])));
      await Promise.all(jobs.map((id) => ledger.reserveForSubmit(id, null, ['pending'])));
      await Promise.all(jobs.map((id, i) => (i % 2 === 0 ? ledger.markSubmitted(id, `req-${id}`) : ledger.markInDoubt(id, 'reset'))));
      expect(await ledger.countsByState()).toMatchObject({ submitted: 20, in_doubt: 20 });
      expect((await ledger.getJob('j002'))?.requestId).toBe('req-j002');
      expect(await ledger.spentMicro()).toBe(40_000);
    });
  });
}
