import { crc32, inflateSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { call, FAST, startSimulator, waitForEnd, type Simulator } from './helpers.js';

const IMAGE = { prompt: 'a red kite over the dunes', model: 'Flux1schnell', width: 512, height: 512, guidance: 0, steps: 4, seed: 7 };
const TEXT_VIDEO = { prompt: 'slow waves', model: 'Ltxv_13B_0_9_8_Distilled_FP8', width: 768, height: 432, guidance: 0, steps: 1, seed: 42, frames: 120, fps: 30 };

/** The chunks of a PNG: type, data, and whether its CRC is right. */
function chunks(png: Buffer): { type: string; data: Buffer; crcOk: boolean }[] {
  const found = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.subarray(at + 4, at + 8).toString('ascii');
    const data = png.subarray(at + 8, at + 8 + length);
    const crc = png.readUInt32BE(at + 8 + length);
    found.push({ type, data, crcOk: crc === crc32(png.subarray(at + 4, at + 8 + length)) });
    at += 12 + length;
  }
  return found;
}

describe('the simulator: text to image and text to video', () => {
  let sim: Simulator | undefined;
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
  });

  it('a text-to-image job ends with a real PNG, under a URL that does not say so', async () => {
    sim = await startSimulator(FAST);
    const submit = await call(sim, '/api/v1/client/txt2img', { json: IMAGE });
    expect(submit.status, submit.text).toBe(200);
    const done = await waitForEnd(sim, submit.body.data.request_id as string);
    expect(done.body.data.status).toBe('done');
    const url = String(done.body.data.result_url);
    expect(new URL(url).pathname).not.toMatch(/\.png$/);
    const result = await fetch(url);
    expect(result.headers.get('content-type')).toBe('image/png');
    const png = Buffer.from(await result.arrayBuffer());
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    const parts = chunks(png);
    expect(parts.map((c) => c.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
    expect(parts.every((c) => c.crcOk)).toBe(true);
    const ihdr = parts[0]!.data;
    const [width, height] = [ihdr.readUInt32BE(0), ihdr.readUInt32BE(4)];
    expect([width, height, ihdr[8], ihdr[9]]).toEqual([64, 64, 8, 2]);
    // Every row: a filter byte and three bytes a pixel.
    expect(inflateSync(parts[1]!.data)).toHaveLength(height * (1 + width * 3));
    expect(sim.stats.accepted.map((a) => a.type)).toEqual(['txt2img']);
  });

  it('prices an image by pixels and steps, whatever its prompt, seed or guidance', async () => {
    sim = await startSimulator(FAST);
    const price = async (fields: Record<string, unknown>) =>
      (await call(sim!, '/api/v1/client/txt2img/price-calculation', { json: { ...IMAGE, ...fields } })).body.data.price as number;
    const base = await price({});
    expect(base).toBeGreaterThan(0);
    expect(await price({ prompt: 'something else entirely', seed: 99 })).toBe(base);
    expect(await price({ width: 1024 })).toBeCloseTo(base * 2, 7);
    expect(await price({ steps: 8 })).toBeCloseTo(base * 2, 7);
  });

  it('refuses an image request as the service does: every problem in one bag', async () => {
    sim = await startSimulator(FAST);
    const missing = await call(sim, '/api/v1/client/txt2img', { json: { model: 'Flux1schnell' } });
    expect(missing.status).toBe(422);
    expect(Object.keys(missing.body.errors).sort()).toEqual(['guidance', 'height', 'prompt', 'seed', 'steps', 'width']);
    const bad = await call(sim, '/api/v1/client/txt2img', { json: { ...IMAGE, width: 500, steps: 9, loras: [{ name: 'ink_sketch', weight: 1 }] } });
    expect(bad.body.errors).toEqual({
      width: ['The width field must be a multiple of 16.'],
      steps: ['The steps field must be between 1 and 8.'],
      loras: ['The loras field is prohibited.'],
    });
    const klein = { ...IMAGE, model: 'Flux_2_Klein_4B_BF16', loras: [{ name: 'oil', weight: -1 }] };
    expect((await call(sim, '/api/v1/client/txt2img', { json: klein })).body.errors).toEqual({
      'loras.0.name': ['The selected loras.0.name is invalid.'],
      'loras.0.weight': ['The loras.0.weight field must be at least 0.'],
    });
    const ok = await call(sim, '/api/v1/client/txt2img', { json: { ...klein, loras: [{ name: 'watercolor', weight: 0.7 }] } });
    expect(ok.status, ok.text).toBe(200);
    // A speech model is not a model for this endpoint.
    expect((await call(sim, '/api/v1/client/txt2img', { json: { ...IMAGE, model: 'Kokoro' } })).body.errors).toEqual({ model: ['The selected model is invalid.'] });
    expect(sim.stats.accepted).toHaveLength(1);
  });

  it('a text-to-video job: JSON in, the video models and their limits, an MP4 out', async () => {
    sim = await startSimulator(FAST);
    const price = await call(sim, '/api/v1/client/txt2video/price-calculation', {
      json: { model: TEXT_VIDEO.model, width: 768, height: 432, frames: 120, steps: 1, fps: 30 },
    });
    expect(price.body.data.price).toBeGreaterThan(0);
    expect((await call(sim, '/api/v1/client/txt2video', { json: { ...TEXT_VIDEO, frames: 240 } })).body.errors).toEqual({
      frames: ['The frames field must be between 30 and 120.'],
    });
    const submit = await call(sim, '/api/v1/client/txt2video', { json: TEXT_VIDEO });
    expect(submit.status, submit.text).toBe(200);
    const done = await waitForEnd(sim, submit.body.data.request_id as string);
    const result = await fetch(String(done.body.data.result_url));
    expect(result.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await result.arrayBuffer()).subarray(4, 8).toString('ascii')).toBe('ftyp');
    expect(sim.stats.accepted.map((a) => a.type)).toEqual(['txt2video']);
  });

  it('counts each kind’s submits apart on the Basic plan', async () => {
    sim = await startSimulator({ ...FAST, plan: 'basic' });
    const images = [];
    for (let i = 0; i < 4; i += 1) images.push(await call(sim, '/api/v1/client/txt2img', { json: { ...IMAGE, seed: i } }));
    expect(images.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    expect(images[3]?.headers.get('x-ratelimit-limit')).toBe('3');
    const videos = [await call(sim, '/api/v1/client/txt2video', { json: TEXT_VIDEO }), await call(sim, '/api/v1/client/txt2video', { json: TEXT_VIDEO })];
    expect(videos.map((a) => a.status)).toEqual([200, 429]);
  });
});
