import { afterEach, describe, expect, it } from 'vitest';
import { buildCatalogue } from '../../src/sim/catalogue.js';
import { resolveOptions } from '../../src/sim/options.js';
import { call, FAST, startSimulator, submitAudio, type Simulator } from './helpers.js';

describe('simulator: auth, routes, models, balance', () => {
  let sim: Simulator;
  afterEach(async () => {
    await sim?.close();
  });

  it('answers 401 without the token and with a wrong one, and counts nothing', async () => {
    sim = await startSimulator(FAST);
    for (const token of [null, 'wrong']) {
      const answer = await call(sim, '/api/v1/client/balance', { token });
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual({ message: 'Unauthenticated.' });
    }
    expect((await submitAudio(sim)).status).toBe(200);
    expect((await call(sim, '/api/v1/client/txt2audio', { token: 'nope', json: {} })).status).toBe(401);
    expect(sim.stats.accepted).toHaveLength(1);
  });

  it('answers unknown routes 404 with a message, and errors as HTML to a client that does not accept JSON', async () => {
    sim = await startSimulator(FAST);
    const unknown = await call(sim, '/api/v1/client/nothing-here');
    expect(unknown.status).toBe(404);
    expect(typeof unknown.body.message).toBe('string');
    const htmlAnswer = await call(sim, '/api/v1/client/balance', { token: null, accept: 'text/html' });
    expect(htmlAnswer.status).toBe(401);
    expect(htmlAnswer.headers.get('content-type')).toMatch(/text\/html/);
  });

  it('pages the models 25 at a time by default, honours limit up to 50 and ignores per_page', async () => {
    sim = await startSimulator(FAST);
    // Every kind's models and the filler: a new kind's models add to the count.
    const total = buildCatalogue(resolveOptions().extraModels).length;
    const first = await call(sim, '/api/v1/client/models?per_page=100');
    expect(first.body.data).toHaveLength(25);
    const pages = Math.ceil(total / 25);
    expect(first.body.meta).toMatchObject({ current_page: 1, per_page: 25, total, last_page: pages });
    expect(first.body.links.next).toContain('page=2');
    expect(first.body.links.prev).toBeNull();
    const second = await call(sim, '/api/v1/client/models?page=2');
    expect(second.body.data).toHaveLength(Math.min(25, total - 25));
    expect(second.body.links.next === null).toBe(pages === 2);
    // A real model sits past the first page: a client that ignores pagination misses it.
    expect(second.body.data.map((m: { slug: string }) => m.slug)).toContain('Ltx2_3_22B_Dist_INT8');

    const big = await call(sim, '/api/v1/client/models?limit=200');
    expect(big.body.meta).toMatchObject({ per_page: 50, last_page: Math.ceil(total / 50) });
    expect(big.body.data).toHaveLength(Math.min(50, total));
  });

  it('filters by inference type, gives an empty list for an unknown one, and serves the shape variations', async () => {
    sim = await startSimulator({ ...FAST, extraModels: 0 });
    const audio = await call(sim, '/api/v1/client/models?limit=50&filter[inference_types]=txt2audio');
    const slugs = audio.body.data.map((m: { slug: string }) => m.slug);
    expect(slugs).toEqual(['Kokoro', 'Chatterbox', 'Qwen3_TTS_12Hz_1_7B_CustomVoice', 'Qwen3_TTS_12Hz_1_7B_Base']);
    const both = await call(sim, '/api/v1/client/models?limit=50&filter%5Binference_types%5D=txt2audio,img2video');
    expect(both.body.meta.total).toBe(6);
    const none = await call(sim, '/api/v1/client/models?filter[inference_types]=teleport');
    expect(none.body.data).toEqual([]);
    expect(none.body.meta.total).toBe(0);

    const byslug = Object.fromEntries(both.body.data.map((m: { slug: string }) => [m.slug, m]));
    expect(byslug['Qwen3_TTS_12Hz_1_7B_Base'].info).toEqual([]);
    expect(byslug['Qwen3_TTS_12Hz_1_7B_CustomVoice'].inference_types).toEqual({ txt2audio: { slug: 'txt2audio' } });
    expect(byslug['Kokoro'].info.limits).toMatchObject({ min_speed: 0.5, max_speed: 2, min_text: 1, max_text: 5000 });
    expect(byslug['Kokoro'].languages.find((l: { slug: string }) => l.slug === 'en-gb').voices.map((v: { slug: string }) => v.slug)).toEqual(['bf_emma', 'bm_george']);
    expect(byslug['Ltxv_13B_0_9_8_Distilled_FP8'].info).toMatchObject({
      limits: { min_steps: 1, max_steps: 1, min_frames: 30, max_frames: 120, min_fps: 30, max_fps: 30 },
      features: { supports_last_frame: false },
    });
    expect(byslug['Ltx2_3_22B_Dist_INT8'].info.features.supports_last_frame).toBe(true);
  });

  it('draws the balance down by each accepted price and refuses below $0.49', async () => {
    sim = await startSimulator({ ...FAST, balanceUsd: 1 });
    const price = await call(sim, '/api/v1/client/txt2audio/price-calculation', { json: { ...submitAudioBody(), text: undefined, count_text: 20 } });
    expect((await submitAudio(sim)).status).toBe(200);
    const balance = await call(sim, '/api/v1/client/balance');
    expect(balance.body.data.balance).toBeCloseTo(1 - price.body.data.price, 8);
    sim.setBalance(0.48);
    const refused = await submitAudio(sim);
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({ message: 'Not enough balance.', errors: { balance: ['Not enough balance.'] } });
    expect(sim.stats.accepted).toHaveLength(1);
    expect(sim.stats.calls.balance).toBe(1);
  });
});

function submitAudioBody(): Record<string, unknown> {
  return { model: 'Kokoro', voice: 'af_sky', lang: 'en-us', speed: 1, format: 'mp3', sample_rate: 24000 };
}
