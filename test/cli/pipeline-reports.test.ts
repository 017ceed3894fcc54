/**
 * What estimate and status show of a pipeline, in process, through a real ledger: the manifest's
 * graph ingested by `estimate --sim`, then an input failed and its dependents blocked through the
 * ledger's own moves, as a run would leave them.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSqliteLedger } from '../../src/store/index.js';
import { expectDocument } from '../helpers/documents.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { useWorkspace } from '../helpers/workspace.js';

const MANIFEST = `version: 1
defaults:
  txt2img: { model: Flux1schnell, width: 512, height: 512, steps: 4, seed: 1, guidance: 0 }
  img2video:
    { model: Ltx2_3_22B_Dist_INT8, width: 768, height: 432, steps: 8, frames: 97, fps: 24, guidance: 1, seed: 3 }
  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }
  img-rmbg: { model: Ben2 }
jobs:
  - { id: poster, type: txt2img, prompt: a lighthouse at dusk }
  - { id: poster-moving, type: img2video, prompt: waves break, first_frame_image: { from: poster } }
  - { id: cut, type: img-rmbg, image: { from: poster } }
  - { id: narration, type: txt2audio, text: "The lighthouse has stood here for two hundred years." }
`;

type EstimateJson = {
  by_step: Record<string, { jobs: number; total: number }>;
  includes_upper_bounds: number;
  jobs: { id: string; price: number; step: number; upper_bound: boolean }[];
};
type StatusJson = {
  counts: Record<string, number>;
  steps: Record<string, Record<string, number>>;
  jobs: { id: string; state: string; error: string | null; step: number; inputs: Record<string, string> }[];
};

describe('a pipeline in estimate and status', () => {
  const workspace = useWorkspace();

  async function estimated(): Promise<{ manifest: string; estimate: EstimateJson }> {
    const manifest = path.join(workspace.dir, 'show.yaml');
    await writeFile(manifest, MANIFEST);
    const json = await mainInProcess(['estimate', manifest, '--sim', '--format', 'json']);
    expect(json.code, json.stderr).toBe(0);
    return { manifest, estimate: expectDocument<EstimateJson>('estimate', json.stdout) };
  }

  it('estimate: the totals by step and the job priced at its bound marked, in the document, table, CSV', async () => {
    const { manifest, estimate } = await estimated();
    const price = (id: string): number => estimate.jobs.find((job) => job.id === id)?.price ?? NaN;
    expect(estimate.jobs.map((job) => [job.id, job.step, job.upper_bound])).toEqual([
      ['poster', 1, false],
      ['poster-moving', 2, false],
      ['cut', 2, true],
      ['narration', 1, false],
    ]);
    expect(estimate.by_step).toEqual({
      1: { jobs: 2, total: Math.round((price('poster') + price('narration')) * 1e6) / 1e6 },
      2: { jobs: 2, total: Math.round((price('poster-moving') + price('cut')) * 1e6) / 1e6 },
    });
    expect(estimate.includes_upper_bounds).toBe(1);

    const table = await mainInProcess(['estimate', manifest, '--sim']);
    expect(table.stdout).toMatch(/\n {2}cut +img-rmbg +Ben2 +≤ \$[\d.]+ +cached\n/);
    expect(table.stdout).toMatch(/\nBy step\n {2}step {2}jobs +total\n {2}1 +2 +\$[\d.]+\n {2}2 +2 +\$[\d.]+\n/);
    expect(table.stdout).toContain('  ≤ 1 job(s) are priced at the catalogue\'s upper bound');
    const csv = (await readFile(path.join(workspace.dir, 'show.estimate.csv'), 'utf8')).split('\n');
    expect(csv[0]).toBe('id,type,model,price_usd,price_source,to_send,step,upper_bound');
    expect(csv[3]).toMatch(/^cut,img-rmbg,Ben2,[\d.]+,cached,yes,2,yes$/);
    const markdown = await readFile(path.join(workspace.dir, 'show.estimate.md'), 'utf8');
    expect(markdown).toContain('## By step\n\n| step | jobs | total |');
  });

  it('status: a failed input blocks its dependents, counted, listed with the reason, by step', async () => {
    const { manifest } = await estimated();
    const ledger = await openSqliteLedger(path.join(workspace.dir, 'show.mediabatch.db'), { mode: 'read-write' });
    try {
      for (const id of ['poster', 'narration']) {
        expect(await ledger.reserveForSubmit(id, null, ['pending'])).toBe('reserved');
        expect(await ledger.markSubmitted(id, `req-${id}`)).toBe('submitted');
      }
      await ledger.markFailedRemote('poster', { reason: 'CONTENT_POLICY', retryable: false, refunded: true });
      const result = path.join(workspace.dir, 'show.out', 'narration.mp3');
      await ledger.markDone('narration', { path: result, bytes: 1, sha256: 'ab'.repeat(32) });
      expect(await ledger.settleBlocked(null)).toEqual({ blocked: 2, unblocked: 0 });
    } finally {
      await ledger.close();
    }

    const json = await mainInProcess(['status', manifest, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const status = expectDocument<StatusJson>('status', json.stdout);
    expect(status.counts).toMatchObject({ blocked: 2, failed: 1, done: 1, pending: 0 });
    expect(status.steps['1']).toMatchObject({ failed: 1, done: 1, blocked: 0 });
    expect(status.steps['2']).toMatchObject({ blocked: 2, pending: 0 });
    const moving = status.jobs.find((job) => job.id === 'poster-moving');
    expect(moving).toMatchObject({ state: 'blocked', step: 2, inputs: { first_frame_image: 'poster' } });
    expect(moving?.error).toMatch(/poster/);
    expect(status.jobs.find((job) => job.id === 'narration')).toMatchObject({ step: 1, inputs: {} });

    const ids = await mainInProcess(['status', manifest, '--state', 'blocked', '--format', 'ids']);
    expect(ids.stdout).toBe('poster-moving\ncut\n');
    const table = await mainInProcess(['status', manifest]);
    expect(table.stdout).toContain('  blocked       2\n');
    const bySteps = [
      '  step  jobs  done  failed  blocked',
      '  1        2     1       1        0',
      '  2        2     0       0        2',
    ];
    expect(table.stdout).toContain(`Jobs by step\n${bySteps.join('\n')}\n`);
    expect(table.stdout).toMatch(/\nBlocked: 2 job\(s\)\n.+\n.+\n {2}id +type +reason\n {2}poster-moving +img2video +input/);
    const csv = (await mainInProcess(['status', manifest, '--format', 'csv'])).stdout.split('\n');
    expect(csv[0]).toMatch(/,in_manifest,step,inputs$/);
    expect(csv[3]).toMatch(/^cut,img-rmbg,.*,blocked,.*,2,image=poster$/);

    // The review page: each row with the inputs the ledger holds, the others as short as before.
    expect((await mainInProcess(['report', manifest])).code).toBe(0);
    const html = await readFile(path.join(workspace.dir, 'show.report.html'), 'utf8');
    const rows = JSON.parse(/id="review-rows">(.*?)<\/script>/s.exec(html)?.[1] ?? '[]') as unknown[][];
    expect(rows.map((row) => [row[0], row[15]])).toEqual([
      ['poster', undefined],
      ['poster-moving', { first_frame_image: 'poster' }],
      ['cut', { image: 'poster' }],
      ['narration', undefined],
    ]);
  });
});
