import { describe, expect, it } from 'vitest';
import type { Ledgers } from '../ledger-contract.js';
import type { JobQuery, Ledger, SendSelection } from '../../../src/store/index.js';
import { allJobs, done, reach, SEND, seed, spec, sync } from './fixtures.js';
import { eventsFor } from '../../support/events.js';

/** Ids a query reads, through windows of two. */
async function ids(ledger: Ledger, query: Omit<JobQuery, 'after' | 'limit'>): Promise<string[]> {
  const out: string[] = [];
  for (let window = await ledger.readJobs({ ...query, limit: 2 }); window.length > 0; ) {
    out.push(...window.map((j) => j.id));
    const last = window.at(-1)!;
    window = await ledger.readJobs({ ...query, limit: 2, after: { index: last.manifestIndex, id: last.id } });
  }
  return out;
}

/** Six pending jobs, priced at 1 µUSD each, with tags. */
async function tagged(ledger: Ledger): Promise<void> {
  const tags: Record<string, string[]> = { 'ch-01': ['book', 'en'], 'ch-02': ['book', 'de'], 'ch-10': ['book'], 'Ch-03': ['en'], intro: ['promo', 'en'], 'take-2': [] };
  await sync(ledger, Object.keys(tags).map((id, i) => ({ ...spec(id, i), tags: tags[id] })));
  await ledger.applyPrices(Object.keys(tags).map((id) => ({ priceKey: `k-${id}`, priceMicro: 1, source: 'quoted' })), SEND);
}

export function selectionContract(ledgers: Ledgers): void {
  describe('the send selection: --only, --tag, --redo', () => {
    it('--only takes exact ids and globs over the whole id, case-sensitively', async () => {
      const ledger = await ledgers.create();
      await tagged(ledger);
      const sendable = (send: Partial<SendSelection>) => ids(ledger, { scope: 'manifest', send: { ...SEND, ...send } });
      expect(await sendable({ only: ['ch-0*'] })).toEqual(['ch-01', 'ch-02']);
      expect(await sendable({ only: ['ch-?0', 'intro'] })).toEqual(['ch-10', 'intro']);
      expect(await sendable({ only: ['[Cc]h-03', 'take-[12]'] })).toEqual(['Ch-03', 'take-2']);
      // A glob matches the whole id, and a pattern without glob characters one id exactly.
      expect(await sendable({ only: ['ch'] })).toEqual([]);
      expect(await sendable({ only: ['CH-01'] })).toEqual([]);
      expect(await sendable({ only: [] })).toHaveLength(6);
    });

    it('--tag picks jobs carrying any of the tags; with --only, a job must match both', async () => {
      const ledger = await ledgers.create();
      await tagged(ledger);
      const sendable = (send: Partial<SendSelection>) => ids(ledger, { scope: 'manifest', send: { ...SEND, ...send } });
      expect(await sendable({ tags: ['en'] })).toEqual(['ch-01', 'Ch-03', 'intro']);
      expect(await sendable({ tags: ['de', 'promo'] })).toEqual(['ch-02', 'intro']);
      expect(await sendable({ tags: ['en'], only: ['ch-*', 'intro'] })).toEqual(['ch-01', 'intro']);
      expect(await sendable({ tags: ['EN'] })).toEqual([]);
      // The same pick, whatever the state, for listings and counts.
      await ledger.reserveForSubmit('ch-01', null, ['pending']);
      expect(await ids(ledger, { scope: 'manifest', pick: { tags: ['en'] } })).toEqual(['ch-01', 'Ch-03', 'intro']);
      expect(await ledger.countJobs({ scope: 'manifest', pick: { only: ['ch-*'] }, states: ['pending'] })).toBe(2);
      expect(await ledger.countJobs({ scope: 'manifest', pick: { only: ['ch-*'] }, send: SEND })).toBe(2);
    });

    it('a query by kinds reads one endpoint class in manifest order, window by window', async () => {
      const ledger = await ledgers.create();
      const kinds = ['txt2audio', 'txt2img', 'txt2audio', 'img2video', 'txt2img', 'txt2audio'] as const;
      await sync(ledger, kinds.map((type, i) => ({ ...spec(`j${i}`, i), type })));
      expect(await ids(ledger, { scope: 'manifest', types: ['txt2audio'] })).toEqual(['j0', 'j2', 'j5']);
      expect(await ids(ledger, { scope: 'manifest', types: ['txt2img', 'img2video'] })).toEqual(['j1', 'j3', 'j4']);
      expect(await ids(ledger, { scope: 'manifest', types: [] })).toEqual([]);
      expect(await ledger.countJobs({ scope: 'manifest', types: ['txt2img'], states: ['pending'] })).toBe(2);
    });

    it('pricing, costs, the flag on listings and --partial all see the one selection', async () => {
      const ledger = await ledgers.create();
      await tagged(ledger);
      const send: SendSelection = { ...SEND, tags: ['book'] };
      expect((await ledger.priceGroups(send)).map((g) => g.groupKey)).toEqual(['g-ch-01', 'g-ch-02', 'g-ch-10']);
      await ledger.applyPrices(['ch-01', 'Ch-03'].map((id) => ({ priceKey: `k-${id}`, priceMicro: 5, source: 'quoted' })), send);
      expect((await allJobs(ledger)).map((j) => j.priceMicro)).toEqual([5, 1, 1, 1, 1, 1]);
      const toSend = (await ledger.costRows(send)).filter((r) => r.toSend);
      expect(toSend.reduce((n, r) => n + r.jobs, 0)).toBe(3);
      expect(toSend.reduce((n, r) => n + r.priceMicro, 0)).toBe(7);
      // A listing may read one selection and flag another.
      const flagged = await ledger.readJobs({ scope: 'manifest', send: { ...SEND, only: ['ch-*'] }, flagSend: { ...SEND, tags: ['de'] }, limit: 10 });
      expect(flagged.map((j) => [j.id, j.toSend])).toEqual([
        ['ch-01', false],
        ['ch-02', true],
        ['ch-10', false],
      ]);
      expect(await ledger.skipAfter(0, send, 'over budget (--partial)')).toEqual({ leftOut: 2, skipped: 2 });
      expect((await allJobs(ledger)).map((j) => [j.id, j.state])).toEqual([
        ['ch-01', 'pending'],
        ['ch-02', 'skipped'],
        ['ch-10', 'skipped'],
        ['Ch-03', 'pending'],
        ['intro', 'pending'],
        ['take-2', 'pending'],
      ]);
    });

    it('names the patterns and tags that match no job of the manifest', async () => {
      const ledger = await ledgers.create();
      await tagged(ledger);
      expect(await ledger.unmatchedPicks({ only: ['ch-0*', 'intro', 'nope', 'x*', 'CH-01'], tags: ['book', 'fr'] })).toEqual({
        only: ['nope', 'x*', 'CH-01'],
        tags: ['fr'],
      });
      expect(await ledger.unmatchedPicks({})).toEqual({ only: [], tags: [] });
      // A job the manifest dropped is not one of its jobs.
      await sync(ledger, [{ ...spec('ch-01', 0), tags: ['book'] }]);
      expect(await ledger.unmatchedPicks({ only: ['intro', 'ch-*'], tags: ['en', 'book'] })).toEqual({ only: ['intro'], tags: ['en'] });
    });

    it('--redo adds done jobs it names to what is sent, and nothing else', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 1_000, b: 2_000, c: 3_000 });
      await reach.done(ledger);
      const sendable = (send: Partial<SendSelection>) => ids(ledger, { scope: 'manifest', send: { ...SEND, ...send } });
      expect(await sendable({})).toEqual(['b', 'c']);
      expect(await sendable({ redo: ['a'] })).toEqual(['a', 'b', 'c']);
      // Only done jobs: naming a pending one changes nothing; a redo is picked like any job.
      expect(await sendable({ redo: ['b'] })).toEqual(['b', 'c']);
      expect(await sendable({ redo: ['a'], only: ['a'] })).toEqual(['a']);
      expect(await sendable({ redo: ['a'], only: ['b'] })).toEqual(['b']);
      expect((await ledger.costRows({ ...SEND, redo: ['a'] })).filter((r) => r.toSend).reduce((n, r) => n + r.priceMicro, 0)).toBe(6_000);
    });

    it('a done job is reserved only when the caller sends from done; its result stays on the row until the new one', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 250_000 });
      await reach.done(ledger);
      expect(await ledger.reserveForSubmit('a', null, ['pending', 'skipped', 'in_doubt', 'failed'])).toBe('wrong-state');
      expect(await ledger.reserveForSubmit('a', 400_000, ['done'])).toBe('over-budget');
      expect(await ledger.reserveForSubmit('a', 500_000, ['done'])).toBe('reserved');
      expect(await ledger.getJob('a')).toMatchObject({ state: 'submitting', spentMicro: 500_000, attempts: 2, requestId: null, resultPath: done.path });
      await ledger.markSubmitted('a', 'req-2');
      const again = { path: '/out/a~2.mp3', bytes: 99, sha256: 'cd'.repeat(32) };
      await ledger.markDone('a', again);
      expect(await ledger.getJob('a')).toMatchObject({ state: 'done', resultPath: again.path, resultSha256: again.sha256, spentMicro: 500_000 });
      // The log keeps both results.
      const doneEvents = (await eventsFor(ledger, 'a')).filter((e) => e.kind === 'done').map((e) => (e.detail as { path: string }).path);
      expect(doneEvents).toEqual([done.path, again.path]);
    });

    it('a redo refunded after an error falls back to what the first result cost', async () => {
      const ledger = await ledgers.create();
      await seed(ledger, { a: 250_000 });
      await reach.done(ledger);
      await ledger.reserveForSubmit('a', null, ['done']);
      await ledger.markSubmitted('a', 'req-2');
      await ledger.markFailedRemote('a', { reason: 'WORKER_TIMEOUT', retryable: true, refunded: true });
      expect(await ledger.getJob('a')).toMatchObject({ state: 'failed', spentMicro: 250_000, resultPath: done.path });
      expect(await ledger.spentMicro()).toBe(250_000);
    });

    it('reads the failed jobs whose failure came after an event of the log', async () => {
      const ledger = await ledgers.create();
      expect(await ledger.lastEventId()).toBe(0);
      await seed(ledger, { a: 1, b: 1, c: 1, d: 1 });
      for (const id of ['a', 'b', 'c', 'd']) {
        await ledger.reserveForSubmit(id, null, ['pending']);
        await ledger.markSubmitted(id, `req-${id}`);
      }
      await ledger.markFailedRemote('a', { reason: 'x', retryable: true, refunded: true });
      const mark = await ledger.lastEventId();
      expect(mark).toBe(Math.max(...(await ledger.readEvents({ afterId: 0, limit: 100 })).map((e) => e.id)));
      await ledger.markFailedRemote('c', { reason: 'x', retryable: true, refunded: true });
      await ledger.markFailedRemote('d', { reason: 'x', retryable: false, refunded: false });
      await ledger.markDone('b', done);
      expect(await ids(ledger, { scope: 'manifest', failedAfter: mark })).toEqual(['c', 'd']);
      expect(await ids(ledger, { scope: 'manifest', failedAfter: mark, send: SEND })).toEqual(['c']);
      expect(await ids(ledger, { scope: 'manifest', failedAfter: 0, send: SEND })).toEqual(['a', 'c']);
      expect(await ledger.countJobs({ scope: 'manifest', failedAfter: await ledger.lastEventId() })).toBe(0);
    });

    it('a read-only handle answers the picks and the last event too', async () => {
      const ledger = await ledgers.create();
      await tagged(ledger);
      const reader = await ledgers.reopen(ledger, { readonly: true });
      expect(await reader.unmatchedPicks({ only: ['zz'] })).toEqual({ only: ['zz'], tags: [] });
      expect(await reader.lastEventId()).toBe(await ledger.lastEventId());
    });
  });
}
