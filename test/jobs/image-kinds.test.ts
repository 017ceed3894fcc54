/**
 * The kinds that take one image (background removal, upscaling, OCR): their checks before
 * anything is sent, their price calls by the image's sides, and a run against the simulator
 * with each result on disk in its form.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { kindOf } from '../../src/jobs/index.js';
import { pngImage, transcriptText } from '../../src/sim/results.js';
import { runInProcess } from '../helpers/in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { rejection } from '../manifest/helpers.js';
import { openMemoryLedger } from '../support/memory-ledger/memory-ledger.js';

/** A PNG's signature and header alone: its sides are what its header says. */
function pngHeader(width: number, height: number): Buffer {
  const header = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  const sides = Buffer.alloc(13);
  sides.writeUInt32BE(width, 0);
  sides.writeUInt32BE(height, 4);
  sides.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([header, sides]);
}

const TIMINGS = {
  pendingMs: { 'img-rmbg': 10, 'img-upscale': 10, img2txt: 10 },
  processingMs: { 'img-rmbg': 20, 'img-upscale': 20, img2txt: 20 },
};

describe('the image kinds', () => {
  const workspace = useWorkspace();

  async function manifestOf(name: string, lines: string[]): Promise<string> {
    const file = path.join(workspace.dir, `${name}.yaml`);
    await writeFile(file, `${['version: 1', 'budget: 1', ...lines].join('\n')}\n`);
    return file;
  }

  it('refuses an image outside 64 to 5000 px a side in any image field, a bad format, a missing image', async () => {
    await writeFile(path.join(workspace.dir, 'tiny.png'), pngHeader(63, 400));
    await writeFile(path.join(workspace.dir, 'huge.png'), pngHeader(5001, 300));
    await writeFile(path.join(workspace.dir, 'ok.png'), pngImage(64));
    const manifest = await manifestOf('bad', [
      'defaults:',
      '  img2video: { model: M, width: 768, height: 432, steps: 8, frames: 97, fps: 24, guidance: 1, seed: 1 }',
      'jobs:',
      '  - { id: cut, type: img-rmbg, model: Ben2, image: tiny.png }',
      '  - { id: clip, type: img2video, prompt: waves, first_frame_image: ok.png, last_frame_image: huge.png }',
      '  - { id: page, type: img2txt, model: Nanonets_Ocr_S_F16, image: ok.png, format: xml }',
      '  - { id: big, type: img-upscale, model: RealESRGAN_x4plus }',
    ]);
    const error = await rejection(manifest);
    expect(error.exitCode).toBe(2);
    expect(error.message.replaceAll(workspace.dir, '<dir>')).toMatchInlineSnapshot(`
      "<dir>/bad.yaml:6:52 job "cut" (#1) image: expected an image of 64 to 5000 pixels a side, got "tiny.png" (63×400 pixels); resize it
      <dir>/bad.yaml:7:94 job "clip" (#2) last_frame_image: expected an image of 64 to 5000 pixels a side, got "huge.png" (5001×300 pixels); resize it
      <dir>/bad.yaml:8:82 job "page" (#3) format: expected text or json, got "xml"
      <dir>/bad.yaml:9:5 job "big" (#4) image: expected a path to a JPG, PNG, GIF, BMP or WebP image, got nothing; set it on the job
      4 problems in <dir>/bad.yaml; nothing was sent."
    `);
  });

  it('prices by the sides the manifest read from the file: one call per size and model, never the file', () => {
    const sides = { width: 640, height: 480 };
    const image = { path: '/p/a.png', written: 'a.png', contentType: 'image/png' as const, bytes: 9, sha256: 'ab', ...sides };
    // The manifest copies the sides into the parameters: priced and keyed, never sent with the submit.
    const params = { model: 'Nanonets_Ocr_S_F16', language: 'en', ...sides };
    const job = { id: 'page', type: 'img2txt' as const, params, media: { image } };
    const pricing = kindOf('img2txt').pricing;
    if (pricing.by !== 'per-key') throw new Error('img2txt is priced per key');
    expect(pricing.request(job)).toEqual({
      endpoint: 'img2txt/price-calculation',
      multipart: { fields: { model: 'Nanonets_Ocr_S_F16', language: 'en', width: '640', height: '480' }, files: [] },
    });
    expect(pricing.keyFields).toEqual(expect.arrayContaining(['width', 'height']));
    const submit = kindOf('img2txt').submit(job);
    expect('multipart' in submit && Object.keys(submit.multipart.fields)).toEqual(['model', 'language']);
  });

  it('runs against the simulator: cut-outs with transparency, an upscaled image, OCR text as <id>.txt', async () => {
    const sim = await workspace.startSim(TIMINGS);
    // Two photos of one size (different bytes) and one of another.
    await writeFile(path.join(workspace.dir, 'a.png'), pngImage(64));
    await writeFile(path.join(workspace.dir, 'b.png'), pngImage(64, true));
    await writeFile(path.join(workspace.dir, 'c.png'), pngImage(80));
    const manifest = await manifestOf('shop', [
      'defaults:',
      '  img-rmbg: { model: Ben2 }',
      '  img2txt: { model: Nanonets_Ocr_S_F16, language: en }',
      'jobs:',
      '  - { id: cut-a, type: img-rmbg, image: a.png }',
      '  - { id: cut-b, type: img-rmbg, image: b.png }',
      '  - { id: cut-c, type: img-rmbg, image: c.png }',
      '  - { id: big-a, type: img-upscale, model: RealESRGAN_x4plus, image: a.png }',
      '  - { id: page-1, type: img2txt, image: a.png }',
      '  - { id: page-2, type: img2txt, image: b.png, return_result_in_response: true }',
    ]);
    const outDir = path.join(workspace.dir, 'shop.out');
    const ledger = openMemoryLedger();
    const ledgerPath = path.join(workspace.dir, 'shop.db');
    await runInProcess({ manifest, ledgerPath, ledger, outDir, baseUrl: sim.url, token: sim.token });

    const files = (await readdir(outDir)).sort();
    expect(files).toEqual(['big-a.png', 'cut-a.png', 'cut-b.png', 'cut-c.png', 'page-1.txt', 'page-2.txt']);
    // Background removal: two sizes, two calls; upscaling one; the two pages of one size, one.
    expect(sim.stats.calls.price).toBe(4);
    for (const id of ['cut-a', 'cut-b', 'cut-c']) {
      const png = await readFile(path.join(outDir, `${id}.png`));
      // The header's colour type: 6 is RGB with an alpha channel.
      expect(png[25]).toBe(6);
    }
    const text = transcriptText().toString('utf8');
    for (const id of ['page-1', 'page-2']) expect(await readFile(path.join(outDir, `${id}.txt`), 'utf8')).toBe(text);
    // The page asked in the response was not downloaded: five files fetched, not six.
    expect(sim.stats.calls.download).toBe(5);
    for (const id of ['cut-a', 'big-a', 'page-1', 'page-2']) expect((await ledger.getJob(id))?.state).toBe('done');
  });
});
