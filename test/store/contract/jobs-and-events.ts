import { describe, expect, it } from 'vitest';
import type { Ledgers } from '../ledger-contract.js';
import type { JobSpec } from '../../../src/store/index.js';
import { allJobs, done, expectBug, ids, SEND, seed, spec, sync } from './fixtures.js';
import { eventsFor } from '../../support/events.js';

export function jobsContract(ledgers: Ledgers): void {
  describe('ingest: the manifest streamed into the ledger', () => {
    it('adds new jobs as pending in manifest order and follows reordering', async () => {
      const ledger = await ledgers.create();
      expect(await sync(ledger, [spec('b', 0), spec('a', 1)])).toMatchObject({ added: 2, changed: 0, dropped: 0, listed: 2 });
      expect((await allJobs(ledger)).map((j) => [j.id, j.state])).toEqual([
        ['b', 'pending'],
        ['a', 'pending'],
      ]);
      expect(await sync(ledger, [spec('a', 0), spec('c', 1), spec('b', 2)])).toMatchObject({ added: 1, listed: 3 });
      expect((await allJobs(ledger)).map((j) => j.id)).toEqual(['a', 'c', 'b']);
      expect(await ledger.getJob('a')).toMatchObject({
        type: 'txt2audio',
        textChars: 1,
        text: 'a',
        origin: 'm.yaml:1:5',
        inManifest: true,
        spentMicro: 0,
        attempts: 0,
        manifestIndex: 0,
        groupKey: 'g-a',
        priceKey: 'k-a',
      });
    });

    it('takes new content for unsent jobs and reports sent ones that changed', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { pend: 1_000_000, skip: 1_000_000, sent: 1_000_000 });
      await ledger.markSkipped('skip', 'over budget');
      await ledger.reserveForSubmit('sent', null, ['pending']);
      await ledger.markSubmitted('sent', 'req-1');

      const result = await sync(ledger, [spec('pend', 0, 'new-p'), spec('skip', 1, 'new-s'), { ...spec('sent', 2, 'new-x'), text: 'other' }]);

      expect(result.put.changed).toEqual([{ id: 'sent', oldHash: 'hash-sent', newHash: 'new-x', state: 'submitted' }]);
      expect(result).toMatchObject({ added: 0, changed: 1 });
      // Nothing was paid for the unsent ones: they take the new content and must be priced again.
      expect(await ledger.getJob('pend')).toMatchObject({ contentHash: 'new-p', priceMicro: null, state: 'pending' });
      expect(await ledger.getJob('skip')).toMatchObject({ contentHash: 'new-s', priceMicro: null, state: 'skipped' });
      // What was sent stays what the ledger holds.
      expect(await ledger.getJob('sent')).toMatchObject({ contentHash: 'hash-sent', text: 'sent', priceMicro: 1_000_000, state: 'submitted' });
      expect((await eventsFor(ledger, 'pend')).at(-1)).toMatchObject({ kind: 'content_changed', detail: { newHash: 'new-p' } });
    });

    it('reports in `moved` new or changed content that another id counts a spend for, and nothing else', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 1_000, b: 1_000, c: 1_000 });
      for (const id of ['a', 'b', 'c']) await ledger.reserveForSubmit(id, null, ['pending']);
      await ledger.markSubmitted('a', 'req-a');
      await ledger.markSubmitted('b', 'req-b');
      await ledger.markSubmitted('c', 'req-c');
      // c's failure was refunded: nothing is counted for its content any more.
      await ledger.markFailedRemote('c', { reason: 'overloaded', retryable: true, refunded: true });

      // Rows numbered by position after one is inserted at the top: every id takes the next one's content.
      const shifted = await sync(ledger, [spec('a', 0, 'hash-new'), spec('b', 1, 'hash-a'), spec('c', 2, 'hash-b'), spec('d', 3, 'hash-c')]);
      expect(shifted.put.moved).toEqual([
        { id: 'b', paidAs: { id: 'a', state: 'submitted' } },
        { id: 'c', paidAs: { id: 'b', state: 'submitted' } },
      ]);
      // Not moved: new content (a), and content whose only spend was refunded (d).
      expect(shifted.put.changed.map((change) => change.id)).toEqual(['a']);

      // The same content under the same id (a job redone on purpose) is no move.
      const again = await sync(ledger, [spec('a', 0), spec('b', 1), spec('c', 2)]);
      expect(again.put.moved).toEqual([]);
    });

    it('leaves out of the manifest what it no longer lists, and lists it again when it comes back', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 1_000, b: 1_000, c: 1_000 });
      await ledger.reserveForSubmit('b', null, ['pending']);
      await ledger.markSubmitted('b', 'req-b');
      expect(await sync(ledger, [spec('a', 0)])).toMatchObject({ dropped: 2, listed: 1 });
      expect((await allJobs(ledger, 'manifest')).map((j) => j.id)).toEqual(['a']);
      // A dropped job still paid for and outstanding is what a report must not hide.
      expect((await allJobs(ledger, 'report')).map((j) => [j.id, j.inManifest])).toEqual([
        ['a', true],
        ['b', false],
      ]);
      expect(await ledger.countsByState('manifest')).toMatchObject({ pending: 1, submitted: 0 });
      expect(await ledger.countsByState('report')).toMatchObject({ pending: 1, submitted: 1 });
      expect(await sync(ledger, [spec('a', 0), spec('c', 1)])).toMatchObject({ added: 0, dropped: 0, listed: 2 });
      expect((await ledger.getJob('c'))?.inManifest).toBe(true);
    });

    it('finds ids held twice across the whole manifest, ignoring case, and across units', async () => {
      const ledger = await ledgers.create();
      const ingest = await ledger.beginIngest();
      const first = await ingest.put('jobs', [spec('intro', 0), spec('Intro', 1), spec('intro', 2)]);
      expect(first.conflicts).toEqual([
        { id: 'Intro', origin: 'm.yaml:2:5', heldBy: { id: 'intro', origin: 'm.yaml:1:5' } },
        { id: 'intro', origin: 'm.yaml:3:5', heldBy: { id: 'intro', origin: 'm.yaml:1:5' } },
      ]);
      // A row with problems claims its id too: a later job with it is reported in the same pass.
      expect(await ingest.claim('source:1', [{ id: 'broken', origin: 'rows.csv:2:1' }])).toEqual([]);
      const second = await ingest.put('source:1', [{ ...spec('BROKEN', 3), origin: 'rows.csv:3:1' }, { ...spec('INTRO', 4), origin: 'rows.csv:4:1' }]);
      expect(second.conflicts.map((c) => [c.id, c.heldBy.origin])).toEqual([
        ['BROKEN', 'rows.csv:2:1'],
        ['INTRO', 'm.yaml:1:5'],
      ]);
      await ingest.rollback();
      expect(await allJobs(ledger)).toEqual([]);
    });

    it('keeps a unit unchanged since it was read as it is, and still finds its ids held again', async () => {
      const ledger = await ledgers.create();
      const ingest = await ledger.beginIngest();
      await ingest.put('jobs', [spec('a', 0)]);
      await ingest.put('source:1', [spec('b', 1), spec('c', 2)]);
      await ingest.putUnitFiles('source:1', [{ path: '/data/rows.csv', stamp: '10:1' }]);
      await ingest.commit([
        { key: 'jobs', position: 0, fingerprint: 'f0' },
        { key: 'source:1', position: 1, fingerprint: 'f1' },
      ]);
      expect(await ledger.units()).toMatchObject([
        { key: 'jobs', position: 0, fingerprint: 'f0', jobs: 1 },
        { key: 'source:1', position: 1, fingerprint: 'f1', jobs: 2 },
      ]);
      expect(await ledger.unitFiles('source:1', '', 10)).toEqual([{ path: '/data/rows.csv', stamp: '10:1' }]);

      const again = await ledger.beginIngest();
      await again.keep('source:1');
      const put = await again.put('jobs', [spec('a', 0), spec('B', 3)]);
      expect(put.conflicts.map((c) => [c.id, c.heldBy.id])).toEqual([['B', 'b']]);
      expect(await again.commit([
        { key: 'jobs', position: 0, fingerprint: 'f0' },
        { key: 'source:1', position: 1, fingerprint: 'f1' },
      ])).toMatchObject({ added: 0, dropped: 0, listed: 3 });

      // A unit no longer in the manifest takes its jobs and its files with it.
      expect(await sync(ledger, [spec('a', 0)])).toMatchObject({ dropped: 2, listed: 1 });
      expect(await ledger.units()).toMatchObject([{ key: 'jobs' }]);
      expect(await ledger.unitFiles('source:1', '', 10)).toEqual([]);
    });

    it('changes nothing until commit, and nothing at all after a rollback', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 1_000 });
      const other = await ledgers.reopen(ledger, { readonly: true });
      const ingest = await ledger.beginIngest();
      await ingest.put('jobs', [spec('a', 0, 'changed'), spec('b', 1)]);
      expect((await allJobs(other)).map((j) => [j.id, j.contentHash])).toEqual([['a', 'hash-a']]);
      await ingest.rollback();
      expect((await allJobs(ledger)).map((j) => [j.id, j.contentHash, j.priceMicro])).toEqual([['a', 'hash-a', 1_000]]);
      expect(await ledger.units()).toMatchObject([{ key: 'jobs', fingerprint: 'f' }]);
    });

    it('records 10,000 jobs in one ingest, and again as a no-op', async () => {
      const ledger = await ledgers.create();
      const specs = Array.from({ length: 10_000 }, (_, i) => spec(`job-${i}`, i));
      expect((await sync(ledger, specs)).added).toBe(10_000);
      expect(await sync(ledger, specs)).toMatchObject({ added: 0, changed: 0, dropped: 0, listed: 10_000 });
      expect((await ledger.countsByState()).pending).toBe(10_000);
      expect(await ledger.countJobs({ scope: 'manifest' })).toBe(10_000);
      const last = await ledger.readJobs({ scope: 'manifest', after: { index: 9_998, id: 'job-9998' }, limit: 5 });
      expect(last.map((j) => j.id)).toEqual(['job-9999']);
    });
  });

  describe('prices and aggregates', () => {
    // Group h's job names a file: a price call may read it (an image's sides).
    const FILES = '{"image":{"width":640,"height":480}}';
    const grouped = (id: string, index: number, chars: number, group = 'g'): JobSpec => ({
      ...spec(id, index),
      textChars: chars,
      groupKey: group,
      priceKey: `${group}|${chars}`,
      paramsJson: JSON.stringify({ model: group === 'g' ? 'Kokoro' : 'Other' }),
      ...(group === 'h' ? { filesJson: FILES } : {}),
    });

    it('groups the jobs to send by price group and length, prices them by key, and sums them up', async () => {
      const ledger = await ledgers.create();
      await sync(ledger, [grouped('a', 0, 10), grouped('b', 1, 10), grouped('c', 2, 20), grouped('d', 3, 5, 'h')]);
      const lengths = [{ chars: 10, jobs: 2 }, { chars: 20, jobs: 1 }];
      expect(await ledger.priceGroups(SEND)).toEqual([
        { groupKey: 'g', type: 'txt2audio', paramsJson: '{"model":"Kokoro"}', filesJson: null, jobs: 3, lengths },
        { groupKey: 'h', type: 'txt2audio', paramsJson: '{"model":"Other"}', filesJson: FILES, jobs: 1, lengths: [{ chars: 5, jobs: 1 }] },
      ]);
      await ledger.applyPrices(
        [
          { priceKey: 'g|10', priceMicro: 100, source: 'quoted' },
          { priceKey: 'g|20', priceMicro: 200, source: 'derived' },
          { priceKey: 'h|5', priceMicro: 7, source: 'cached' },
        ],
        SEND,
      );
      expect((await allJobs(ledger)).map((j) => [j.id, j.priceMicro, j.priceSource])).toEqual([
        ['a', 100, 'quoted'],
        ['b', 100, 'quoted'],
        ['c', 200, 'derived'],
        ['d', 7, 'cached'],
      ]);
      // A job already sent keeps the price it was sent at; it is no longer one to send.
      await ledger.reserveForSubmit('a', null, ['pending']);
      await ledger.applyPrices([{ priceKey: 'g|10', priceMicro: 999, source: 'quoted' }], SEND);
      expect((await ledger.getJob('a'))?.priceMicro).toBe(100);
      expect((await ledger.getJob('b'))?.priceMicro).toBe(999);
      const rows = await ledger.costRows(SEND);
      const line = (toSend: boolean, group: string) => rows.find((r) => r.toSend === toSend && r.groupKey === group);
      expect(line(false, 'g')).toMatchObject({ model: 'Kokoro', jobs: 1, priceMicro: 100, unpriced: 0 });
      expect(rows.filter((r) => r.toSend).reduce((n, r) => n + r.priceMicro, 0)).toBe(999 + 200 + 7);
      // A plan reads only the lines to send: the same lines.
      const byKey = (lines: typeof rows) => [...lines].sort((x, y) => `${x.groupKey} ${x.priceSource}`.localeCompare(`${y.groupKey} ${y.priceSource}`));
      expect(byKey(await ledger.costRows(SEND, 'to_send'))).toEqual(byKey(rows.filter((r) => r.toSend)));
      expect((await ledger.readJobs({ scope: 'manifest', flagSend: SEND, limit: 10 })).map((j) => [j.id, j.toSend])).toEqual([
        ['a', false],
        ['b', true],
        ['c', true],
        ['d', true],
      ]);
    });

    it('takes prices only in whole micro-dollars', async () => {
      const ledger = await ledgers.create();
      await sync(ledger, [spec('a', 0)]);
      await expect(ledger.applyPrices([{ priceKey: 'k-a', priceMicro: 0.5, source: 'quoted' }], SEND)).rejects.toThrow(/^bug in mediabatch: price key k-a/);
      await expect(ledger.applyPrices([{ priceKey: 'k-a', priceMicro: -1, source: 'quoted' }], SEND)).rejects.toThrow(/^bug in mediabatch/);
      expect((await ledger.getJob('a'))?.priceMicro).toBeNull();
    });

    it('selects failed jobs to send again only when the service called them retryable and refunded them', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { retry: 1_000, kept: 1_000, doubt: 1_000 });
      for (const id of ['retry', 'kept', 'doubt']) await ledger.reserveForSubmit(id, null, ['pending']);
      await ledger.markSubmitted('retry', 'r1');
      await ledger.markSubmitted('kept', 'r2');
      await ledger.markInDoubt('doubt', 'reset');
      await ledger.markFailedRemote('retry', { reason: 'WORKER_TIMEOUT', retryable: true, refunded: true });
      await ledger.markFailedRemote('kept', { reason: 'bad prompt', retryable: false, refunded: true });
      expect(await ledger.getJob('retry')).toMatchObject({ state: 'failed', retryable: true, refunded: true, spentMicro: 0 });
      const sendable = async (send: typeof SEND) => (await ledger.readJobs({ scope: 'manifest', send, limit: 10 })).map((j) => j.id);
      expect(await sendable(SEND)).toEqual(['retry']);
      expect(await sendable({ resubmitInDoubt: true })).toEqual(['retry', 'doubt']);
      expect(await ledger.reserveForSubmit('kept', null, ['failed'])).toBe('wrong-state');
      expect(await ledger.reserveForSubmit('retry', null, ['failed'])).toBe('reserved');
      expect(await ledger.getJob('retry')).toMatchObject({ state: 'submitting', retryable: null, refunded: null, attempts: 2 });
      // Any other failure only on purpose (run --redo): named, and reserved from failed_for_good.
      expect(await sendable({ ...SEND, redo: ['kept'] })).toEqual(['kept']);
      expect(await ledger.reserveForSubmit('kept', null, ['failed', 'failed_for_good'])).toBe('reserved');
      expect(await ledger.getJob('kept')).toMatchObject({ state: 'submitting', attempts: 2 });
    });

    it('skips the jobs to send after a place in the manifest, in one go, each with its event', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 1, b: 1, c: 1, d: 1 });
      await ledger.markSkipped('c', 'earlier run');
      expect(await ledger.skipAfter(1, SEND, 'over budget (--partial)')).toEqual({ leftOut: 2, skipped: 1 });
      expect((await allJobs(ledger)).map((j) => j.state)).toEqual(['pending', 'pending', 'skipped', 'skipped']);
      expect((await eventsFor(ledger, 'd')).at(-1)).toMatchObject({ kind: 'skipped', fromState: 'pending', toState: 'skipped', detail: { reason: 'over budget (--partial)' } });
      expect((await eventsFor(ledger, 'c')).at(-1)).toMatchObject({ kind: 'not_sent', fromState: 'skipped', toState: 'skipped' });
    });

    it('reads submitted jobs in the order they became submitted, earlier runs first', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 1, b: 1, c: 1 });
      for (const id of ['c', 'a', 'b']) {
        await ledger.reserveForSubmit(id, null, ['pending']);
        await ledger.markSubmitted(id, `req-${id}`);
      }
      const first = await ledger.readFollowing(0, 2);
      expect(first.map((f) => [f.id, f.requestId])).toEqual([
        ['c', 'req-c'],
        ['a', 'req-a'],
      ]);
      expect((await ledger.readFollowing(first.at(-1)!.followSeq, 2)).map((f) => f.id)).toEqual(['b']);
    });
  });

  describe('split parts', () => {
    it("reads a split job's listed parts in order, ignoring case, and lists the splits whose listed parts are all done", async () => {
      const ledger = await ledgers.create();
      const part = (parent: string, n: number, index: number): JobSpec => ({ ...spec(`${parent}.p00${n}`, index), parentId: parent });
      const parts = [part('story', 2, 0), part('story', 1, 1), part('tale', 1, 2), part('tale', 2, 3)];
      await sync(ledger, parts);
      await ledger.applyPrices(parts.map((p) => ({ priceKey: p.priceKey, priceMicro: 1, source: 'quoted' })), SEND);
      expect((await ledger.readParts('STORY')).map((j) => j.id)).toEqual(['story.p001', 'story.p002']);
      const finish = async (id: string): Promise<void> => {
        await ledger.reserveForSubmit(id, null, ['pending']);
        await ledger.markSubmitted(id, `req-${id}`);
        await ledger.markDone(id, done);
      };
      await finish('story.p001');
      await finish('tale.p001');
      expect(await ledger.splitsDone('', 10)).toEqual([]);
      await finish('story.p002');
      expect(await ledger.splitsDone('', 10)).toEqual(['story']);
      // The part still to do leaves the manifest: what is listed of the split is done.
      await sync(ledger, parts.slice(0, 3));
      expect(await ledger.splitsDone('', 10)).toEqual(['story', 'tale']);
      expect(await ledger.splitsDone('story', 10)).toEqual(['tale']);
      expect(await ledger.splitsDone('', 1)).toEqual(['story']);
      expect((await ledger.readParts('tale')).map((j) => j.id)).toEqual(['tale.p001']);
    });
  });

  describe('jobsVersion: whether a document read from the ledger is still true', () => {
    it('changes with every write to a job, and with nothing else', async () => {
      const ledger = await ledgers.create();
      const versions = [await ledger.jobsVersion()];
      const write = async (what: () => Promise<unknown>): Promise<void> => {
        await what();
        await ledger.flush();
        versions.push(await ledger.jobsVersion());
      };
      await write(() => sync(ledger, [spec('a', 0), spec('b', 1), spec('c', 2)]));
      await write(() => ledger.applyPrices([{ priceKey: 'k-a', priceMicro: 100, source: 'quoted' }], SEND));
      await write(() => ledger.reserveForSubmit('a', null, ['pending']));
      await write(() => ledger.markSubmitted('a', 'req-1'));
      await write(() => ledger.noteUncollected('a', 'not_collected', 'the disk was full'));
      await write(() => ledger.markDone('a', done));
      await write(() => ledger.markSkipped('b', 'over budget'));
      await write(() => sync(ledger, [spec('a', 0), spec('b', 1)]));
      expect(new Set(versions).size, `versions: ${versions.join(', ')}`).toBe(versions.length);

      const settled = await ledger.jobsVersion();
      await allJobs(ledger);
      await ledger.countsByState();
      await ledger.costRows(SEND);
      await ledger.setMeta('budget_usd', '5');
      await ledger.putPrices([{ key: 'k-z', priceUsd: 0.01, source: 'quoted' }]);
      await ledger.recordEvent(null, 'note', { any: 'thing' });
      await ledger.flush();
      expect(await ledger.jobsVersion()).toBe(settled);
    });

    it('counts writes made through another handle, as another process makes them', async () => {
      const ledger = await ledgers.create();
      await sync(ledger, [spec('a', 0)]);
      const before = await ledger.jobsVersion();
      const other = await ledgers.reopen(ledger);
      await other.markSkipped('a', 'over budget');
      await other.flush();
      expect(await ledger.jobsVersion()).not.toBe(before);
      const reader = await ledgers.reopen(ledger, { readonly: true });
      expect(await reader.jobsVersion()).toBe(await ledger.jobsVersion());
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
      const issues = async () => (await allJobs(ledger)).map((o) => [o.id, o.state, o.issue, o.lastError]);
      expect(await issues()).toEqual([
        ['a', 'submitted', 'not_collected', 'result refused: over the size limit'],
        ['b', 'submitted', 'status_unknown', 'the service does not know request req-b (404)'],
      ]);
      expect((await ledger.readJobs({ scope: 'report', issue: 'status_unknown', limit: 5 })).map((j) => j.id)).toEqual(['b']);
      expect(await ledger.countJobs({ scope: 'report', issue: 'not_collected' })).toBe(1);
      // Nothing about the money changes: the job was paid for and its result is still to come.
      expect(await ledger.spentMicro()).toBe(750_000);
      expect((await eventsFor(ledger, 'a')).at(-1)).toMatchObject({
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
      expect((await eventsFor(ledger, 'a')).filter((e) => e.kind === 'not_collected')).toEqual([]);
    });
  });

  describe('events and commits', () => {
    it('the event log only grows: what was written stays exactly as it was, in order', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 250_000 });
      await ledger.reserveForSubmit('a', null, ['pending']);
      await ledger.markSubmitted('a', 'req-1');
      const earlier = await eventsFor(ledger, 'a');
      await ledger.recordEvent('a', 'note', { n: 1 });
      await ledger.markDone('a', { path: '/o/a', bytes: 1, sha256: '00' });
      await expectBug(ledger.markDone('a', { path: '/o/a', bytes: 1, sha256: '00' }), 'a');
      const later = await eventsFor(ledger, 'a');
      expect(later.slice(0, earlier.length)).toEqual(earlier);
      expect(later.slice(earlier.length).map((e) => e.kind)).toEqual(['note', 'done']);
      const order = later.map((e) => e.id);
      expect(order).toEqual([...order].sort((x, y) => x - y));
      expect(new Set(order).size).toBe(order.length);
      expect(later.at(-2)).toMatchObject({ kind: 'note', fromState: null, toState: null, detail: { n: 1 } });
    });

    it('run-level events are read with a null job id', async () => {
      const ledger = await ledgers.create();
      await sync(ledger, [spec('a', 0)]);
      await ledger.recordEvent(null, 'manifest_moved', { from: '/a.yaml', to: '/b.yaml' });
      const run = await eventsFor(ledger, null);
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
      const everything = [...(await eventsFor(ledger, null)), ...(await eventsFor(ledger, 'a')), ...(await eventsFor(ledger, 'b'))].sort(
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
      const ofA = await eventsFor(ledger, 'a');
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
      expect((await eventsFor(after, 'a')).at(-1)).toMatchObject({ kind: 'note', detail: { n: 1 } });
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
