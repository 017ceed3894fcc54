import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { sendInLanes } from '../../src/runner/lanes.js';
import { SendFeed } from '../../src/runner/send-feed.js';
import type { JobRow, Ledger } from '../../src/store/index.js';
import { ids, SEND, spec, sync } from '../store/contract/fixtures.js';
import { openMemoryLedger } from '../support/memory-ledger/memory-ledger.js';

const free = async (): Promise<void> => undefined;
const PENDING = { scope: 'manifest', states: ['pending'] } as const;
const SPEECH = ['txt2audio'] as const;

/** Rows still pending among `wanted`: what the ledger would call ready, as a dependent's upstream finishes. */
async function pendingOf(ledger: Ledger, wanted: readonly string[]): Promise<JobRow[]> {
  return ledger.readJobs({ scope: 'manifest', states: ['pending'], pick: { only: wanted }, limit: wanted.length });
}

/** Reserved and sent: no longer pending, as a submit leaves a row. */
async function send(ledger: Ledger, row: JobRow): Promise<void> {
  expect(await ledger.reserveForSubmit(row.id, null, ['pending'])).toBe('reserved');
  await ledger.markSubmitted(row.id, `req-${row.id}`);
}

describe('the lanes\' feed: rows walked and rows pushed while the send goes on', () => {
  it('takes every row once, whether it was walked, pushed behind the walk, ahead of it, or while in hand', async () => {
    const ledger = openMemoryLedger();
    const all = ids(1200);
    await sync(ledger, all.map((id, index) => spec(id, index)));
    await ledger.applyPrices(all.map((id) => ({ priceKey: `k-${id}`, priceMicro: 1, source: 'quoted' })), SEND);
    const stop = new AbortController().signal;
    const feed = new SendFeed({ quiet: free, stop });
    const lane = feed.lane('submit:txt2audio', (after, limit) => ledger.readJobs({ ...PENDING, after, limit }));
    const taken: string[] = [];
    await sendInLanes([lane], {
      concurrency: 4,
      stop,
      take: free,
      work: async (row) => {
        taken.push(row.id);
        const n = all.indexOf(row.id);
        // Neighbours on both sides of the walk, and the row itself, are "made ready" again.
        const around = [all[n - 3], all[n - 1], row.id, all[n + 1], all[n + 700]];
        feed.push(await pendingOf(ledger, around.filter((id) => id !== undefined)));
        await send(ledger, row);
        return 'next';
      },
    });
    expect(taken).toHaveLength(all.length);
    expect(new Set(taken).size).toBe(all.length);
  });

  it('sends a row made ready after the walk ended, in a lane of its own, and ends only once nothing in flight can make more', async () => {
    const ledger = openMemoryLedger();
    await sync(ledger, [spec('a', 0), { ...spec('b', 1), type: 'txt2img' }]);
    await ledger.applyPrices(['a', 'b'].map((id) => ({ priceKey: `k-${id}`, priceMicro: 1, source: 'quoted' })), SEND);
    const stop = new AbortController().signal;
    // What a follow queue would be doing: collecting a's result, which makes b ready.
    let collecting = Promise.resolve();
    const feed = new SendFeed({ quiet: () => collecting, stop });
    const lanes = [
      feed.lane('submit:txt2audio', (after, limit) => ledger.readJobs({ ...PENDING, types: SPEECH, after, limit })),
      feed.lane('submit:txt2img'),
    ];
    const taken: string[] = [];
    await sendInLanes(lanes, {
      concurrency: 2,
      stop,
      take: free,
      work: async (row) => {
        taken.push(row.id);
        await send(ledger, row);
        if (row.id === 'a') collecting = delay(50).then(async () => feed.push(await pendingOf(ledger, ['b'])));
        return 'next';
      },
    });
    expect(taken).toEqual(['a', 'b']);
    expect(await ledger.countsByState()).toMatchObject({ submitted: 2 });
  });
});
