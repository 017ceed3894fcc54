import { expect } from 'vitest';
import { MediabatchError } from '../../../src/errors.js';
import type { JobRow, JobSpec, JobState, Ledger, PutResult, SendSelection, SyncResult } from '../../../src/store/index.js';

/** A job of its own price group and price key (`k-<id>`), so a test prices each job apart. */
export const spec = (id: string, index: number, contentHash = `hash-${id}`): JobSpec => ({
  id,
  index,
  contentHash,
  type: 'txt2audio',
  paramsJson: JSON.stringify({ text: id }),
  textChars: id.length,
  text: id,
  origin: `m.yaml:${index + 1}:5`,
  groupKey: `g-${id}`,
  priceKey: `k-${id}`,
});

export const SEND: SendSelection = { resubmitInDoubt: false };

/** One ingest of one unit (`jobs`, unless said): the jobs put, then committed. */
export async function sync(ledger: Ledger, specs: readonly JobSpec[], unit = 'jobs'): Promise<SyncResult & { put: PutResult }> {
  const ingest = await ledger.beginIngest();
  const put = await ingest.put(unit, specs);
  return { ...(await ingest.commit([{ key: unit, position: 0, fingerprint: 'f' }])), put };
}

/** Records the jobs and gives each the price listed, in micro-dollars. */
export async function seed(ledger: Ledger, pricesMicro: Record<string, number>): Promise<void> {
  const ids = Object.keys(pricesMicro);
  await sync(ledger, ids.map((id, index) => spec(id, index)));
  await ledger.applyPrices(ids.map((id) => ({ priceKey: `k-${id}`, priceMicro: pricesMicro[id]!, source: 'quoted' })), SEND);
}

/** Every job of the ledger in manifest order, through the windows a listing reads. */
export async function allJobs(ledger: Ledger, scope: 'manifest' | 'report' | 'all' = 'all'): Promise<JobRow[]> {
  const rows: JobRow[] = [];
  for (let window = await ledger.readJobs({ scope, limit: 3 }); window.length > 0; ) {
    rows.push(...window);
    const last = window.at(-1)!;
    window = await ledger.readJobs({ scope, limit: 3, after: { index: last.manifestIndex, id: last.id } });
  }
  return rows;
}

/** A listed job as the ingest was given it, so that a test can put the manifest again with a change. */
export const specOf = (row: JobRow): JobSpec => ({
  id: row.id,
  index: row.manifestIndex,
  contentHash: row.contentHash,
  type: row.type,
  paramsJson: row.paramsJson,
  textChars: row.textChars ?? undefined,
  text: row.text ?? undefined,
  origin: row.origin ?? '',
  groupKey: row.groupKey ?? '',
  priceKey: row.priceKey ?? '',
});

/** The manifest again, `inputs` given to the jobs named (their content unchanged) and `added` jobs after. */
export async function relist(ledger: Ledger, inputs: Record<string, JobSpec['inputs']>, added: readonly JobSpec[] = []): Promise<void> {
  const specs = (await allJobs(ledger, 'manifest')).map((row) => ({ ...specOf(row), inputs: inputs[row.id] }));
  await sync(ledger, [...specs, ...added]);
}

export const input = (from: string, field = 'text'): { field: string; from: string; origin: string } => ({ field, from, origin: `m.yaml:1:${field.length}` });

/** Job `id` reserved, submitted and failed at the service: for good (not retryable) or to be retried; refunded, so nothing is spent. */
export async function failJob(ledger: Ledger, id: string, retryable = false): Promise<void> {
  expect(await ledger.reserveForSubmit(id, null, ['pending'])).toBe('reserved');
  expect(await ledger.markSubmitted(id, `req-${id}`)).toBe('submitted');
  await ledger.markFailedRemote(id, { reason: 'CONTENT_POLICY', retryable, refunded: true });
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
    await reach.submitted(l);
    // Retryable and refunded: the one failure a run may send again.
    await l.markFailedRemote('a', { reason: 'WORKER_TIMEOUT', retryable: true, refunded: true });
  },
  in_doubt: async (l) => {
    await reach.submitting(l);
    await l.markInDoubt('a', 'timeout after the body was sent');
  },
  // "a" takes the result of "up", which failed for good: nothing this run sends can bring it.
  blocked: async (l) => {
    await relist(l, { a: [input('up')] }, [spec('up', 99)]);
    await l.applyPrices([{ priceKey: 'k-up', priceMicro: 1, source: 'quoted' }], SEND);
    await failJob(l, 'up');
    expect(await l.settleBlocked(SEND)).toEqual({ blocked: 1, unblocked: 0 });
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
