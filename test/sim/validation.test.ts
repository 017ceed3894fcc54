import { afterEach, describe, expect, it } from 'vitest';
import { call, FAST, PNG, startSimulator, submitAudio, VIDEO, videoForm, type Simulator } from './helpers.js';

const AUDIO_PRICE = { model: 'Kokoro', voice: 'af_sky', lang: 'en-us', speed: 1, format: 'mp3', sample_rate: 24000 };

describe('simulator: Laravel 422s and price calculation', () => {
  let sim: Simulator;
  afterEach(async () => {
    await sim?.close();
  });

  it('refuses an unknown model under errors.model, and a model of the other type too', async () => {
    sim = await startSimulator(FAST);
    const unknown = await submitAudio(sim, { model: 'Kokoro_v9' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors.model).toEqual(['The selected model is invalid.']);
    const wrongType = await submitAudio(sim, { model: 'Ltxv_13B_0_9_8_Distilled_FP8' });
    expect(wrongType.body.errors.model).toEqual(['The selected model is invalid.']);
    expect(sim.stats.accepted).toEqual([]);
  });

  it('summarises several errors as the first plus "(and N more errors)"', async () => {
    sim = await startSimulator(FAST);
    const answer = await submitAudio(sim, { voice: 'bf_emma', speed: 3, format: 'ogg' });
    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({
      message: 'The selected voice is invalid. (and 2 more errors)',
      errors: {
        voice: ['The selected voice is invalid.'],
        speed: ['The speed field must be between 0.5 and 2.'],
        format: ['The selected format is invalid.'],
      },
    });
  });

  it('checks text length against the model and voices against the language', async () => {
    sim = await startSimulator(FAST);
    const long = await submitAudio(sim, { model: 'Chatterbox', lang: 'fr', voice: 'default', text: 'x'.repeat(3001) });
    expect(long.body).toEqual({ message: 'The text field must not be greater than 3000 characters.', errors: { text: ['The text field must not be greater than 3000 characters.'] } });
    const gb = await submitAudio(sim, { lang: 'en-gb', voice: 'bf_emma' });
    expect(gb.status).toBe(200);
    const badLang = await submitAudio(sim, { lang: 'English' });
    expect(badLang.body.errors).toEqual({ lang: ['The selected lang is invalid.'] });
  });

  it('accepts txt2audio as multipart as well as JSON', async () => {
    sim = await startSimulator(FAST);
    const form = new FormData();
    for (const [k, v] of Object.entries({ ...AUDIO_PRICE, text: 'Hello' })) form.set(k, String(v));
    const answer = await call(sim, '/api/v1/client/txt2audio', { form });
    expect(answer.status).toBe(200);
    expect(answer.body.data.request_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('checks img2video numbers, image bytes and last-frame support', async () => {
    sim = await startSimulator(FAST);
    const ok = await call(sim, '/api/v1/client/img2video', { form: videoForm() });
    expect(ok.status).toBe(200);
    const frames = await call(sim, '/api/v1/client/img2video', { form: videoForm({ frames: 240 }) });
    expect(frames.body).toEqual({ message: 'The frames field must be between 30 and 120.', errors: { frames: ['The frames field must be between 30 and 120.'] } });
    const fps = await call(sim, '/api/v1/client/img2video', { form: videoForm({ fps: 24 }) });
    expect(fps.body.errors).toEqual({ fps: ['The fps field must be 30.'] });
    const notAnImage = await call(sim, '/api/v1/client/img2video', { form: videoForm({}, { first_frame_image: new TextEncoder().encode('not a picture at all') }) });
    expect(notAnImage.body.errors).toEqual({ first_frame_image: ['The first frame image field must be a file of type: jpg, jpeg, png, gif, bmp, webp.'] });
    const missing = await call(sim, '/api/v1/client/img2video', { form: videoForm({}, {}) });
    expect(missing.body.errors).toEqual({ first_frame_image: ['The first frame image field is required.'] });
    const last = await call(sim, '/api/v1/client/img2video', { form: videoForm({}, { first_frame_image: PNG, last_frame_image: PNG }) });
    expect(last.body.errors).toEqual({ last_frame_image: ['The last frame image field is prohibited.'] });
    const ltx2 = videoForm({ model: 'Ltx2_3_22B_Dist_INT8', frames: 121, fps: 24, steps: 8, guidance: 1 }, { first_frame_image: PNG, last_frame_image: PNG });
    expect((await call(sim, '/api/v1/client/img2video', { form: ltx2 })).status).toBe(200);
    expect(sim.stats.accepted.map((a) => a.type)).toEqual(['img2video', 'img2video']);
  });

  it('refuses an image over 10 MB with 422 and a body over 75 MB with 413', async () => {
    sim = await startSimulator(FAST);
    const big = new Uint8Array(10 * 1024 * 1024 + 1);
    big.set(PNG);
    const image = await call(sim, '/api/v1/client/img2video', { form: videoForm({}, { first_frame_image: big }) });
    expect(image.body.errors).toEqual({ first_frame_image: ['The first frame image field must not be greater than 10240 kilobytes.'] });
    const huge = new Uint8Array(75 * 1024 * 1024 + 1);
    huge.set(PNG);
    const tooLarge = await call(sim, '/api/v1/client/img2video', { form: videoForm({}, { first_frame_image: huge }) });
    expect(tooLarge.status).toBe(413);
    expect(sim.stats.accepted).toEqual([]);
  });

  it('prices txt2audio linearly by text or count_text, with speed, rounded to 8 decimals', async () => {
    sim = await startSimulator(FAST);
    const price = async (body: Record<string, unknown>) =>
      (await call(sim, '/api/v1/client/txt2audio/price-calculation', { json: { ...AUDIO_PRICE, ...body } })).body;
    expect(await price({ count_text: 1000 })).toEqual({ data: { price: 0.00077 } });
    expect((await price({ text: 'x'.repeat(1000) })).data.price).toBe(0.00077);
    expect((await price({ count_text: 1000, speed: 2 })).data.price).toBe(0.000385);
    expect((await price({ count_text: 7 })).data.price).toBe(0.00000539);
    const missing = await price({});
    expect(missing.errors).toEqual({ count_text: ['The count text field is required when text is not present.'] });
    expect((await price({ count_text: 6000 })).errors.count_text).toEqual(['The count text field must be between 1 and 5000.']);
    expect(sim.stats.calls.price).toBe(6);
  });

  it("breaks linearity in 'minimum' and 'rounded' modes", async () => {
    sim = await startSimulator({ ...FAST, pricing: 'minimum' });
    const quote = async (s: Simulator, n: number) =>
      (await call(s, '/api/v1/client/txt2audio/price-calculation', { json: { ...AUDIO_PRICE, count_text: n } })).body.data.price;
    expect(await quote(sim, 10)).toBe(0.0005);
    expect(await quote(sim, 100)).toBe(0.0005);
    expect(await quote(sim, 5000)).toBe(0.00385);
    await sim.close();
    sim = await startSimulator({ ...FAST, pricing: 'rounded' });
    expect(await quote(sim, 10)).toBe(0.0001);
    expect(await quote(sim, 1000)).toBe(0.0008);
  });

  it('prices img2video by pixels × frames × steps and validates the same bounds', async () => {
    sim = await startSimulator(FAST);
    const answer = await call(sim, '/api/v1/client/img2video/price-calculation', { json: VIDEO });
    expect(answer.body.data.price).toBeCloseTo(0.0398131, 6);
    const bad = await call(sim, '/api/v1/client/img2video/price-calculation', { json: { ...VIDEO, width: 4000, steps: 2 } });
    expect(bad.body.errors).toEqual({ width: ['The width field must be between 64 and 1280.'], steps: ['The steps field must be 1.'] });
  });
});
