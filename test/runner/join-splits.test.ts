import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/runner/context.js';
import { openMemoryLedger } from '../support/memory-ledger/memory-ledger.js';
import { runInProcess } from '../helpers/in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { FAST } from '../reliability/helpers.js';

const DEFAULTS = '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: wav, sample_rate: 24000 }';
const PLAYLIST = '#EXTM3U\nchapter.p001.wav\nchapter.p002.wav\nchapter.p003.wav\n';

describe('joins of split jobs', () => {
  const workspace = useWorkspace();

  /**
   * A manifest with a short job, and with `chapter` (cut into three parts, all sent at once and
   * done together) once `withChapter` is called.
   */
  async function splitRun(): Promise<{ runOnce: () => Promise<RunEvent[]>; withChapter: () => Promise<void>; out: string; accepted: () => number }> {
    const sim = await workspace.startSim(FAST);
    const sentences = Array.from({ length: 480 }, (_, i) => `Sentence number ${i + 1} is here.`);
    await writeFile(path.join(workspace.dir, 'long.txt'), `${sentences.join(' ')}\n`);
    const manifest = path.join(workspace.dir, 'book.yaml');
    const jobs = ['  - { id: intro, type: txt2audio, text: "The intro." }'];
    const write = () => writeFile(manifest, ['version: 1', 'defaults:', DEFAULTS, 'jobs:', ...jobs, ''].join('\n'));
    await write();
    const withChapter = async () => {
      jobs.push('  - { id: chapter, type: txt2audio, text_file: long.txt, split: sentences }');
      await write();
    };
    const out = path.join(workspace.dir, 'book.out');
    // What the runner joins is the point, not the file: each run reads the ledger the last one left.
    const ledger = openMemoryLedger();
    const runOnce = () => runInProcess({ manifest, ledgerPath: path.join(workspace.dir, 'book.mediabatch.db'), ledger, outDir: out, baseUrl: sim.url, token: sim.token });
    return { runOnce, withChapter, out, accepted: () => sim.stats.accepted.length };
  }

  const joined = (events: readonly RunEvent[]) => events.filter((event) => event.kind === 'joined');

  it('parts done at the same moment are joined once, and a later run does not join them again', async () => {
    const { runOnce, withChapter, out, accepted } = await splitRun();
    await withChapter();
    const first = await runOnce();
    expect(first.filter((event) => event.kind === 'done')).toHaveLength(4);
    expect(joined(first)).toEqual([{ kind: 'joined', id: 'chapter', path: path.join(out, 'chapter.wav'), parts: 3, bytes: expect.any(Number) }]);
    expect(readFileSync(path.join(out, 'chapter.m3u'), 'utf8')).toBe(PLAYLIST);
    const again = await runOnce();
    expect(joined(again)).toEqual([]);
    expect(accepted()).toBe(4);
  });

  it("a person's own <id>.m3u is kept: the playlist goes beside it, as the joined file does, and is not written again", async () => {
    const { runOnce, withChapter, out } = await splitRun();
    // A run before, so that the results folder is this ledger's.
    await runOnce();
    await withChapter();
    await writeFile(path.join(out, 'chapter.m3u'), 'my own playlist\n');
    await writeFile(path.join(out, 'chapter.wav'), 'my own recording');
    const first = await runOnce();
    expect(joined(first).map((event) => event.kind === 'joined' && event.path)).toEqual([path.join(out, 'chapter~2.wav')]);
    expect(readFileSync(path.join(out, 'chapter.m3u'), 'utf8')).toBe('my own playlist\n');
    expect(readFileSync(path.join(out, 'chapter.wav'), 'utf8')).toBe('my own recording');
    expect(readFileSync(path.join(out, 'chapter~2.m3u'), 'utf8')).toBe(PLAYLIST);
    expect(first).toContainEqual({
      kind: 'warning',
      message: `job "chapter": ${path.join(out, 'chapter.m3u')} was not written by mediabatch, so it is kept as it is; the playlist is saved as ${path.join(out, 'chapter~2.m3u')}`,
    });
    // The end-of-run sweep finds the playlist beside the person's file: nothing is joined again.
    expect(joined(await runOnce())).toEqual([]);
    expect(existsSync(path.join(out, 'chapter~3.m3u'))).toBe(false);
    expect(existsSync(path.join(out, 'chapter~3.wav'))).toBe(false);
  });
});
