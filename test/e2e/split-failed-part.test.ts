import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mainInProcess } from '../helpers/main-in-process.js';
import { runInProcessResult } from '../helpers/in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { forward, startScripted, type Scripted } from '../security/servers.js';
import { FAST, ledgerRows } from '../reliability/helpers.js';

const DEFAULTS = '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: wav, sample_rate: 24000 }';
const SUBMIT = /^\/api\/v1\/client\/txt2audio$/;

describe('a part of a split job that failed for good', () => {
  const workspace = useWorkspace();
  const servers: Scripted[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  it('the run names the job it cannot join and the command that sends only that part; that command joins it', async () => {
    const sim = await workspace.startSim(FAST);
    // About 14,000 characters of short sentences: three parts under Kokoro's 5,000.
    const sentences = Array.from({ length: 480 }, (_, i) => `Sentence number ${i + 1} is here.`);
    await writeFile(path.join(workspace.dir, 'long.txt'), `${sentences.join(' ')}\n`);
    const manifest = path.join(workspace.dir, 'book.yaml');
    await writeFile(manifest, ['version: 1', 'defaults:', DEFAULTS, 'jobs:', '  - { id: chapter, type: txt2audio, text_file: long.txt, split: sentences }', ''].join('\n'));
    // The first answer about each of the middle part's first two requests says it failed, neither
    // retryable nor refunded.
    const middle = new Set<string>();
    let failuresLeft = 2;
    const front = await startScripted(async (req) => {
      const reply = await forward(sim.url, req);
      if (req.method === 'POST' && SUBMIT.test(req.url)) {
        const { text } = JSON.parse(req.body) as { text: string };
        if (!text.startsWith('Sentence number 1 ') && !text.endsWith('number 480 is here.')) {
          middle.add((JSON.parse(reply.body.toString()) as { data: { request_id: string } }).data.request_id);
        }
        return reply;
      }
      const asked = /\/request-status\/([0-9a-f-]{36})/.exec(req.url)?.[1];
      if (asked !== undefined && middle.delete(asked) && failuresLeft > 0) {
        failuresLeft -= 1;
        const data = { status: 'error', progress: 100, result_url: null, error_code: 'WORKER_ERROR', error_message: 'The worker failed while generating.', retryable: false, refunded: false };
        return { status: 200, body: JSON.stringify({ data }) };
      }
      return reply;
    });
    servers.push(front);
    const args = ['run', manifest, '--base-url', front.url, '--plan', 'unlimited', '--poll-ms', '50'];

    // The CLI's main in this process: the command it hints at is built from the arguments it was given.
    const first = await mainInProcess(args, { MEDIABATCH_TOKEN: sim.token });
    expect(first.code, first.stderr).toBe(1);
    const command = `mediabatch ${args.join(' ')} --redo chapter.p002`;
    expect(first.stderr).toContain(
      `job "chapter" cannot be joined: chapter.p002 failed and no run sends it again by itself. To generate only that part (priced and budgeted; the done parts are not paid again), then join: ${command}`,
    );
    const out = path.join(workspace.dir, 'book.out');
    expect(existsSync(path.join(out, 'chapter.wav'))).toBe(false);
    // The runs after the first in this process: what they send, join and leave unjoined.
    const again = (select?: { redo: string[] }) =>
      runInProcessResult({ manifest, ledgerPath: path.join(workspace.dir, 'book.mediabatch.db'), outDir: out, baseUrl: front.url, token: sim.token, select });
    // A plain run sends nothing more: the failure is for good.
    const plain = await again();
    expect(plain.result.summary.counts.failed).toBe(1);
    expect(plain.result.unjoined).toEqual([{ id: 'chapter', failedParts: ['chapter.p002'] }]);
    expect(sim.stats.accepted).toHaveLength(3);

    // Failed for good once more: --retries (2 by default) does not send it a third time.
    const failedAgain = await again({ redo: ['chapter.p002'] });
    expect(failedAgain.result.summary.counts.failed).toBe(1);
    expect(failedAgain.result.unjoined).toEqual([{ id: 'chapter', failedParts: ['chapter.p002'] }]);
    expect(sim.stats.accepted).toHaveLength(4);

    const redo = await again({ redo: ['chapter.p002'] });
    expect(redo.result.outcome?.execute.fatal).toBeUndefined();
    // One submit each time: the failed part; the done parts are not paid again.
    expect(sim.stats.accepted).toHaveLength(5);
    expect((await ledgerRows(path.join(workspace.dir, 'book.mediabatch.db'))).map((row) => [row.id, row.state])).toEqual([
      ['chapter.p001', 'done'],
      ['chapter.p002', 'done'],
      ['chapter.p003', 'done'],
    ]);
    expect(redo.events).toContainEqual(expect.objectContaining({ kind: 'joined', id: 'chapter', parts: 3, path: path.join(out, 'chapter.wav') }));
    expect(redo.result.unjoined).toEqual([]);
    expect(readFileSync(path.join(out, 'chapter.m3u'), 'utf8')).toBe('#EXTM3U\nchapter.p001.wav\nchapter.p002.wav\nchapter.p003.wav\n');
  });
});
