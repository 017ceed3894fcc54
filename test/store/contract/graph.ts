import { describe, expect, it } from 'vitest';
import type { Ledgers } from '../ledger-contract.js';
import type { InputRef, JobSpec, Ledger } from '../../../src/store/index.js';
import { allJobs, expectBug, failJob, input, SEND, spec, sync } from './fixtures.js';
import { eventsFor } from '../../support/events.js';

/** A job taking the results named (field → upstream id); its content differs from the same job without them. */
const taking = (id: string, index: number, inputs: Record<string, string>): JobSpec => ({
  ...spec(id, index, `hash-${id}-${Object.values(inputs).join('+')}`),
  inputs: Object.entries(inputs).map(([field, from]) => input(from, field)),
});

/** The jobs recorded and priced at 1 µUSD each (their own price keys). */
async function pipeline(ledger: Ledger, specs: readonly JobSpec[]): Promise<void> {
  await sync(ledger, specs);
  await ledger.applyPrices(specs.map((s) => ({ priceKey: s.priceKey, priceMicro: 1, source: 'quoted' })), SEND);
}

/** a → b → c, and d alone. */
const chain = (): JobSpec[] => [spec('a', 0), taking('b', 1, { text: 'a' }), taking('c', 2, { text: 'b' }), spec('d', 3)];

async function complete(ledger: Ledger, id: string, sha256 = 'ab'.repeat(32)): Promise<void> {
  expect(await ledger.reserveForSubmit(id, null, ['pending', 'skipped', 'done'])).toBe('reserved');
  expect(await ledger.markSubmitted(id, `req-${id}-${sha256.slice(0, 4)}`)).toBe('submitted');
  await ledger.markDone(id, { path: `/out/${id}`, bytes: 1, sha256 });
}

const states = async (ledger: Ledger): Promise<Record<string, [string, string | null]>> =>
  Object.fromEntries((await allJobs(ledger, 'manifest')).map((j) => [j.id, [j.state, j.lastError]]));

export function graphContract(ledgers: Ledgers): void {
  describe('pipelines: jobs that take other jobs\' results', () => {
    it('records each job\'s inputs, price bound and step with its content; a dropped job has no step', async () => {
      const ledger = await ledgers.create();
      await sync(ledger, [...chain(), { ...taking('e', 4, { 'images.0': 'a', 'images.1': 'c' }), priceBound: true }]);
      const rows = Object.fromEntries((await allJobs(ledger)).map((j) => [j.id, j]));
      expect(rows['a']).toMatchObject({ inputs: null, priceBound: false, step: 1 });
      expect(rows['b']).toMatchObject({ inputs: { text: 'a' }, step: 2 });
      expect(rows['c']).toMatchObject({ inputs: { text: 'b' }, step: 3 });
      expect(rows['e']).toMatchObject({ inputs: { 'images.0': 'a', 'images.1': 'c' }, priceBound: true, step: 4 });

      await sync(ledger, [spec('a', 0), taking('c', 1, { text: 'a' })]);
      expect(await ledger.getJob('c')).toMatchObject({ inputs: { text: 'a' }, step: 2 });
      expect(await ledger.getJob('b')).toMatchObject({ inManifest: false, step: null });
    });

    it('a job already sent keeps the inputs it was sent with when its content changes', async () => {
      const ledger = await ledgers.create();
      await pipeline(ledger, chain());
      await complete(ledger, 'a');
      await complete(ledger, 'b');
      const put = await sync(ledger, [spec('a', 0), taking('b', 1, { text: 'd' }), spec('d', 2)]);
      expect(put.put.changed.map((c) => c.id)).toEqual(['b']);
      expect((await ledger.getJob('b'))?.inputs).toEqual({ text: 'a' });
    });

    it('a blocked job was never sent: new content replaces its own, inputs too, and it still waits', async () => {
      const ledger = await ledgers.create();
      await pipeline(ledger, chain());
      await failJob(ledger, 'a');
      await ledger.settleBlocked(SEND);
      const put = await sync(ledger, [spec('a', 0), taking('b', 1, { text: 'd' }), taking('c', 2, { text: 'b' }), spec('d', 3)]);
      expect(put.put.changed).toEqual([]);
      expect(await ledger.getJob('b')).toMatchObject({ state: 'blocked', inputs: { text: 'd' }, priceMicro: null });
      expect(await ledger.settleBlocked(SEND)).toEqual({ blocked: 0, unblocked: 2 });
    });

    it('readInputs: every reference of a listed job in windows, with the type it names, null when absent, and split parents', async () => {
      const ledger = await ledgers.create();
      const part = (id: string, index: number): JobSpec => ({ ...spec(id, index), parentId: 'book' });
      await sync(ledger, [
        part('book-1', 0),
        part('book-2', 1),
        { ...taking('v', 2, { text: 'book', first_frame_image: 'img' }), type: 'img2video' },
        taking('w', 3, { text: 'gone' }),
        { ...spec('img', 4), origin: 'm.yaml:9:3' },
      ]);
      const refs: InputRef[] = [];
      for (let window = await ledger.readInputs(undefined, 2); window.length > 0; ) {
        refs.push(...window);
        window = await ledger.readInputs(window.at(-1), 2);
      }
      expect(refs).toEqual([
        { jobId: 'v', jobType: 'img2video', field: 'first_frame_image', fromId: 'img', fromType: 'txt2audio', fromSplit: false, origin: 'm.yaml:1:17', stepped: true },
        { jobId: 'v', jobType: 'img2video', field: 'text', fromId: 'book', fromType: 'txt2audio', fromSplit: true, origin: 'm.yaml:1:4', stepped: true },
        { jobId: 'w', jobType: 'txt2audio', field: 'text', fromId: 'gone', fromType: null, fromSplit: false, origin: 'm.yaml:1:4', stepped: true },
      ]);
      // The same content read again from other lines: the references move with it.
      await sync(ledger, [{ ...taking('w', 0, { text: 'gone' }), inputs: [{ field: 'text', from: 'gone', origin: 'm.yaml:7:9' }] }]);
      expect(await ledger.readInputs(undefined, 10)).toMatchObject([{ jobId: 'w', origin: 'm.yaml:7:9' }]);
      // Jobs in a cycle, or taking from one, have no step: theirs are the only references a cycle check must walk.
      await sync(ledger, [taking('x', 0, { text: 'y' }), taking('y', 1, { text: 'x' }), taking('z', 2, { text: 'x' }), taking('q', 3, { text: 'gone' })]);
      const stepped = (await ledger.readInputs(undefined, 10)).map((ref) => [ref.jobId, ref.stepped]);
      expect(stepped).toEqual([['q', true], ['x', false], ['y', false], ['z', false]]);
    });

    it('ready: only jobs every input of which is done; dependentsReady finds those of one job', async () => {
      const ledger = await ledgers.create();
      await pipeline(ledger, [...chain(), taking('e', 4, { first: 'a', second: 'd' })]);
      const ready = async () => (await ledger.readJobs({ scope: 'manifest', send: SEND, ready: true, limit: 10 })).map((j) => j.id);
      expect(await ready()).toEqual(['a', 'd']);
      expect(await ledger.countJobs({ scope: 'manifest', ready: true })).toBe(2);
      expect(await ledger.dependentsReady('a', SEND)).toEqual([]);

      await complete(ledger, 'a');
      expect((await ledger.dependentsReady('a', SEND)).map((j) => j.id)).toEqual(['b']);
      expect(await ready()).toEqual(['b', 'd']);
      await complete(ledger, 'd');
      expect((await ledger.dependentsReady('d', SEND)).map((j) => j.id)).toEqual(['e']);
      expect((await ledger.dependentsReady('a', SEND)).map((j) => j.id)).toEqual(['b', 'e']);
      // Only what the selection sends: not a job left out by --only, nor one already sent.
      expect((await ledger.dependentsReady('a', { ...SEND, only: ['e'] })).map((j) => j.id)).toEqual(['e']);
      await complete(ledger, 'b');
      expect((await ledger.dependentsReady('a', SEND)).map((j) => j.id)).toEqual(['e']);
    });

    it('settleBlocked: an input failed for good blocks its dependents, transitively, each with its reason and an event', async () => {
      const ledger = await ledgers.create();
      await pipeline(ledger, chain());
      await failJob(ledger, 'a');
      expect(await ledger.settleBlocked(SEND)).toEqual({ blocked: 2, unblocked: 0 });
      expect(await states(ledger)).toEqual({
        a: ['failed', 'CONTENT_POLICY'],
        b: ['blocked', 'input "a" failed: CONTENT_POLICY'],
        c: ['blocked', 'input "b" is blocked'],
        d: ['pending', null],
      });
      expect((await ledger.countsByState('manifest')).blocked).toBe(2);
      expect((await eventsFor(ledger, 'b')).at(-1)).toMatchObject({
        kind: 'blocked', fromState: 'pending', toState: 'blocked', detail: { reason: 'input "a" failed: CONTENT_POLICY' },
      });
      // Settled: a second call changes nothing. Blocked jobs are not sent, nor ready.
      expect(await ledger.settleBlocked(SEND)).toEqual({ blocked: 0, unblocked: 0 });
      expect((await ledger.readJobs({ scope: 'manifest', send: SEND, limit: 10 })).map((j) => j.id)).toEqual(['d']);

      // run --redo a: a may be done by this run, so both wait for it as pending again.
      expect(await ledger.settleBlocked({ ...SEND, redo: ['a'] })).toEqual({ blocked: 0, unblocked: 2 });
      expect(await states(ledger)).toMatchObject({ b: ['pending', null], c: ['pending', null] });
      expect((await eventsFor(ledger, 'c')).at(-1)).toMatchObject({ kind: 'unblocked', fromState: 'blocked', toState: 'pending' });
    });

    it('settleBlocked: an input the service refused outright (no retryable flag at all) blocks', async () => {
      const ledger = await ledgers.create();
      await pipeline(ledger, chain());
      expect(await ledger.reserveForSubmit('a', null, ['pending'])).toBe('reserved');
      await ledger.markRefused('a', '422: prompt too long');
      expect(await ledger.settleBlocked(SEND)).toEqual({ blocked: 2, unblocked: 0 });
      expect((await ledger.getJob('b'))?.lastError).toBe('input "a" failed: 422: prompt too long');
    });

    it('settleBlocked: a retryable failure is sent again by any run; in doubt only with --resubmit-in-doubt', async () => {
      const ledger = await ledgers.create();
      await pipeline(ledger, chain());
      await failJob(ledger, 'a', true);
      expect(await ledger.settleBlocked(SEND)).toEqual({ blocked: 0, unblocked: 0 });
      // After the run (--retries spent): nothing more is sent.
      expect(await ledger.settleBlocked(null)).toEqual({ blocked: 2, unblocked: 0 });
      expect(await ledger.settleBlocked(SEND)).toEqual({ blocked: 0, unblocked: 2 });

      expect(await ledger.reserveForSubmit('a', null, ['failed'])).toBe('reserved');
      await ledger.markInDoubt('a', 'connection reset');
      expect(await ledger.settleBlocked(SEND)).toEqual({ blocked: 2, unblocked: 0 });
      expect((await ledger.getJob('b'))?.lastError).toBe('input "a" is in doubt');
      expect(await ledger.settleBlocked({ ...SEND, resubmitInDoubt: true })).toEqual({ blocked: 0, unblocked: 2 });
    });

    it('settleBlocked: an input left out (over budget) blocks after the run; the next run that may send it unblocks', async () => {
      const ledger = await ledgers.create();
      await pipeline(ledger, chain());
      await ledger.markSkipped('a', 'over budget');
      await ledger.markSkipped('b', 'over budget');
      expect(await ledger.settleBlocked(SEND)).toEqual({ blocked: 0, unblocked: 0 });
      expect(await ledger.settleBlocked(null)).toEqual({ blocked: 2, unblocked: 0 });
      expect(await states(ledger)).toMatchObject({ b: ['blocked', 'input "a" was left out (over budget)'], c: ['blocked', 'input "b" is blocked'] });
      expect((await eventsFor(ledger, 'b')).at(-1)).toMatchObject({ fromState: 'skipped', toState: 'blocked' });
      // --only c: neither input is picked, so c keeps waiting; b is not picked either.
      expect(await ledger.settleBlocked({ ...SEND, only: ['c'] })).toEqual({ blocked: 0, unblocked: 0 });
      expect(await ledger.settleBlocked(SEND)).toEqual({ blocked: 0, unblocked: 2 });
    });

    it('priceForSend: the real price replaces the bound before the reservation, which counts it alone', async () => {
      const ledger = await ledgers.create();
      await sync(ledger, [spec('a', 0), { ...taking('b', 1, { text: 'a' }), priceBound: true }]);
      await ledger.applyPrices([{ priceKey: 'k-a', priceMicro: 100_000, source: 'quoted' }, { priceKey: 'k-b', priceMicro: 900_000, source: 'quoted' }], SEND);
      await complete(ledger, 'a');
      await ledger.priceForSend('b', { priceKey: 'k-b-real', priceMicro: 300_000, source: 'quoted' });
      expect(await ledger.getJob('b')).toMatchObject({ priceMicro: 300_000, priceKey: 'k-b-real', priceBound: false, spentMicro: 0 });
      expect((await eventsFor(ledger, 'b')).at(-1)).toMatchObject({ kind: 'repriced', detail: { priceMicro: 300_000, boundMicro: 900_000 } });
      // At the bound, 100,000 + 900,000 would pass a 500,000 budget by far; at its price it fits.
      expect(await ledger.reserveForSubmit('b', 500_000, ['pending'])).toBe('reserved');
      expect(await ledger.spentMicro()).toBe(400_000);
      await expectBug(ledger.priceForSend('b', { priceKey: 'k', priceMicro: 1, source: 'quoted' }), 'b');
    });

    it('records the inputs\' results with the reservation; inputsChanged names the jobs sent with an input since generated again', async () => {
      const ledger = await ledgers.create();
      await pipeline(ledger, chain());
      await complete(ledger, 'a', '11'.repeat(32));
      await complete(ledger, 'b', '22'.repeat(32));
      expect(await ledger.inputsChanged(10)).toEqual([]);
      // run --redo a: a new result; b was sent with the old one. c was never sent: nothing to say of it.
      await complete(ledger, 'a', '33'.repeat(32));
      expect(await ledger.inputsChanged(10)).toEqual([{ id: 'b', state: 'done', field: 'text', fromId: 'a' }]);
      await complete(ledger, 'b', '44'.repeat(32));
      expect(await ledger.inputsChanged(10)).toEqual([]);
    });
  });
}
