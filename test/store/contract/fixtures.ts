import { expect } from 'vitest';
import { MediabatchError } from '../../../src/errors.js';
import type { JobSpec, JobState, Ledger } from '../../../src/store/index.js';

export const spec = (id: string, index: number, contentHash = `hash-${id}`): JobSpec => ({
  id,
  index,
  contentHash,
  type: 'txt2audio',
  paramsJson: JSON.stringify({ text: id }),
  textChars: id.length,
});

/** Syncs the jobs and gives each the price listed, in micro-dollars. */
export async function seed(ledger: Ledger, pricesMicro: Record<string, number>): Promise<void> {
  const ids = Object.keys(pricesMicro);
  await ledger.syncJobs(ids.map((id, index) => spec(id, index)));
  await ledger.setPrices(ids.map((id) => ({ id, priceMicro: pricesMicro[id]!, source: 'quoted', priceKey: `k-${id}` })));
}

export const done = { path: '/out/a.mp3', bytes: 1234, sha256: 'ab'.repeat(32) };

/** Ways to bring job "a" into each state through the interface only. */
export const reach: Record<JobState, (l: Ledger) => Promise<void>> = {
  pending: async () => {},
  skipped: (l) => l.markSkipped('a', 'over budget'),
  submitting: async (l) => expect(await l.reserveForSubmit('a', null, ['pending'])).toBe('reserved'),
  submitted: async (l) => {
    await reach.submitting(l);
    expect(await l.markSubmitted('a', 'req-1')).toBe('submitted');
  },
  done: async (l) => {
    await reach.submitted(l);
    await l.markDone('a', done);
  },
  failed: async (l) => {
    await reach.submitting(l);
    await l.markRefused('a', '422 text too long');
  },
  in_doubt: async (l) => {
    await reach.submitting(l);
    await l.markInDoubt('a', 'timeout after the body was sent');
  },
};

/** What a refused call must be: a bug in mediabatch about that job, not an error the user can fix. */
export async function expectBug(call: Promise<unknown>, jobId: string): Promise<Error> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'the call should have been refused').toBeInstanceOf(Error);
  expect(error).not.toBeInstanceOf(MediabatchError);
  expect((error as Error).message.startsWith(`bug in mediabatch: job "${jobId}"`), (error as Error).message).toBe(true);
  return error as Error;
}

export const ids = (n: number, prefix = 'j'): string[] => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(3, '0')}`);
