import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createServiceClient } from '../../src/api/client.js';
import { systemClock } from '../../src/clock.js';
import { createRunDeps, DEFAULT_RETRY, type RunEvent } from '../../src/runner/context.js';
import { saveResult } from '../../src/runner/download.js';
import { Downstream } from '../../src/runner/downstream.js';
import { SplitJoins } from '../../src/runner/join-splits.js';
import { Pace } from '../../src/runner/pace.js';
import type { Ledger } from '../../src/store/index.js';
import { runInProcess } from '../helpers/in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { startScripted, type Reply, type Scripted } from '../security/servers.js';
import { SEND, sync } from '../store/contract/fixtures.js';
import { openMemoryLedger } from '../support/memory-ledger/memory-ledger.js';

const sha256 = (body: Buffer): string => createHash('sha256').update(body).digest('hex');

describe('embeddings, end to end against the simulator', () => {
  const workspace = useWorkspace();

  it('asked in the response or left as a file, each lands as <id>.json with the model, the input and the numbers', async () => {
    const sim = await workspace.startSim({ pendingMs: { txt2embedding: 10 }, processingMs: { txt2embedding: 20 } });
    const manifest = path.join(workspace.dir, 'index.yaml');
    await writeFile(
      manifest,
      [
        'version: 1',
        'budget: 1',
        'defaults:',
        '  txt2embedding: { model: Bge_M3_FP16 }',
        'jobs:',
        '  - { id: fox, type: txt2embedding, input: "the quick brown fox" }',
        '  - { id: dog, type: txt2embedding, input: "the lazy dog", return_result_in_response: true }',
        '',
      ].join('\n'),
    );
    const outDir = path.join(workspace.dir, 'index.out');
    const ledger = openMemoryLedger();
    const events = await runInProcess({ manifest, ledgerPath: path.join(workspace.dir, 'index.db'), ledger, outDir, baseUrl: sim.url, token: sim.token });

    expect((await readdir(outDir)).sort()).toEqual(['dog.json', 'fox.json']);
    for (const [id, input] of [['fox', 'the quick brown fox'], ['dog', 'the lazy dog']] as const) {
      const body = await readFile(path.join(outDir, `${id}.json`));
      const document = JSON.parse(body.toString()) as { model: string; input: string; embedding: number[] };
      expect(document).toMatchObject({ model: 'Bge_M3_FP16', input });
      expect(document.embedding).toHaveLength(1024);
      expect(document.embedding.every((n) => typeof n === 'number')).toBe(true);
      const row = await ledger.getJob(id);
      expect(row).toMatchObject({ state: 'done', resultPath: path.join(outDir, `${id}.json`), resultBytes: body.length, resultSha256: sha256(body) });
      expect(events).toContainEqual({ kind: 'done', id, path: path.join(outDir, `${id}.json`), bytes: body.length });
    }
    // The job that asked for its result in the response had no file to fetch: one download, the other's.
    expect(sim.stats.calls.download).toBe(1);
  });
});

/**
 * A text result saved by the runner from a scripted storage server or from the status itself:
 * the same placement as a file, with a text's own forms. Its job is a row of the ledger as any.
 */
describe('text results, saved from a scripted server or from the status', () => {
  const workspace = useWorkspace();
  let storage: Scripted | undefined;
  afterEach(async () => storage?.close());

  async function saving(reply: Reply) {
    storage = await startScripted(() => reply);
    const ledger: Ledger = openMemoryLedger();
    await sync(ledger, [{
      id: 'ep1', index: 0, contentHash: 'h', type: 'img2txt', paramsJson: '{"model":"Nanonets_Ocr_S_F16"}',
      origin: 'm.yaml:1:5', groupKey: 'g', priceKey: 'k',
    }]);
    await ledger.applyPrices([{ priceKey: 'k', priceMicro: 300, source: 'quoted' }], SEND);
    await ledger.reserveForSubmit('ep1', null, ['pending']);
    await ledger.markSubmitted('ep1', 'req-1');
    const events: RunEvent[] = [];
    const outDir = path.join(workspace.dir, 'out');
    const client = createServiceClient({ baseUrl: storage.url, token: 't' });
    const options = { concurrency: 1, budgetMicro: null, noWait: false, resubmitInDoubt: false, outDir, retry: DEFAULT_RETRY, maxResultBytes: 1e6, retryFailed: 0 };
    const deps = createRunDeps({ client, ledger, pace: new Pace({}), clock: systemClock, options, stop: new AbortController().signal, emit: (e) => events.push(e) });
    const job = { id: 'ep1', type: 'img2txt' as const, params: { model: 'Nanonets_Ocr_S_F16' } };
    const save = async (found: { url: string } | { inline: string }) => {
      await saveResult(deps, new Downstream(new SplitJoins(deps)), job, found);
      await client.close();
    };
    return { ledger, events, outDir, save, url: `${storage.url}/r/ep1?sig=1` };
  }

  it('writes a plain text behind the URL to <id>.txt and records its path, bytes and sha256', async () => {
    const { ledger, outDir, save, url } = await saving({ status: 200, headers: { 'content-type': 'text/plain' }, body: 'Hello <world> & café\n' });
    await save({ url });
    const body = await readFile(path.join(outDir, 'ep1.txt'));
    expect(body.toString()).toBe('Hello <world> & café\n');
    expect(await readdir(outDir)).toEqual(['ep1.txt']);
    expect(await ledger.getJob('ep1')).toMatchObject({ state: 'done', resultPath: path.join(outDir, 'ep1.txt'), resultBytes: body.length, resultSha256: sha256(body) });
  });

  it('writes a transcript with timestamps as <id>.txt and <id>.json, never over a person\'s file', async () => {
    const transcript = { text: 'Hi there.', segments: [{ start: 0, end: 1.2, text: 'Hi there.' }] };
    const { ledger, outDir, save, url } = await saving({ status: 200, body: JSON.stringify(transcript) });
    await mkdir(outDir, { recursive: true });
    await writeFile(path.join(outDir, 'ep1.txt'), 'my own notes');
    await save({ url });
    expect((await readdir(outDir)).sort()).toEqual(['ep1.json', 'ep1.txt', 'ep1~2.txt']);
    expect(await readFile(path.join(outDir, 'ep1.txt'), 'utf8')).toBe('my own notes');
    expect(await readFile(path.join(outDir, 'ep1~2.txt'), 'utf8')).toBe('Hi there.');
    expect(JSON.parse(await readFile(path.join(outDir, 'ep1.json'), 'utf8'))).toEqual(transcript);
    expect((await ledger.getJob('ep1'))?.resultPath).toBe(path.join(outDir, 'ep1~2.txt'));
  });

  it('collected again after a crash that left the structure placed, finds it by its bytes: no second copy', async () => {
    const transcript = { text: 'Hi.', segments: [{ start: 0, end: 0.4, text: 'Hi.' }] };
    const { ledger, outDir, save, url } = await saving({ status: 200, body: JSON.stringify(transcript) });
    await mkdir(outDir, { recursive: true });
    // What the first try placed before it was killed: the structure, as it writes it, not yet the text.
    await writeFile(path.join(outDir, 'ep1.json'), `${JSON.stringify(transcript, null, 2)}\n`);
    await save({ url });
    expect((await readdir(outDir)).sort()).toEqual(['ep1.json', 'ep1.txt']);
    expect((await ledger.getJob('ep1'))?.resultPath).toBe(path.join(outDir, 'ep1.txt'));
  });

  it('takes the text the status carries, with nothing fetched', async () => {
    const { outDir, save } = await saving({ status: 500, body: 'never asked' });
    await save({ inline: 'Transcribed in the status.' });
    expect(await readFile(path.join(outDir, 'ep1.txt'), 'utf8')).toBe('Transcribed in the status.');
    expect(storage?.received).toEqual([]);
  });

  it('leaves an HTML page given as the text uncollected: the job stays submitted, nothing on disk', async () => {
    const page = '<!DOCTYPE html><html><body>Quota exceeded</body></html>';
    const { ledger, events, outDir, save, url } = await saving({ status: 200, headers: { 'content-type': 'text/html' }, body: page });
    await save({ url });
    expect(await readdir(outDir)).toEqual([]);
    expect(await ledger.getJob('ep1')).toMatchObject({ state: 'submitted', resultPath: null });
    expect(events).toContainEqual({
      kind: 'warning',
      message: 'job "ep1": paid result not collected (the result is not text: its bytes are an HTML page); it stays submitted and the next run tries again',
    });
  });
});
