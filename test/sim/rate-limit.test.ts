import { afterEach, describe, expect, it } from 'vitest';
import { call, FAST, sleep, startSimulator, submitAudio, type Simulator } from './helpers.js';
import { clockStoppedAt } from '../helpers/clock.js';

describe('simulator: rate limits', () => {
  let sim: Simulator;
  afterEach(async () => {
    await sim?.close();
  });

  it('sends the headers, refuses the excess with 429 and Retry-After, and resets with the window', async () => {
    sim = await startSimulator({ ...FAST, rateWindowMs: 400, rateLimits: { 'submit:txt2audio': { perWindow: 2 } } });
    // Align to the start of a window so the three calls land in the same one.
    await sleep(400 - (Date.now() % 400) + 5);
    const one = await submitAudio(sim);
    expect(one.headers.get('x-ratelimit-limit')).toBe('2');
    expect(one.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(one.headers.get('x-ratelimit-daily-limit')).toBeNull();
    await submitAudio(sim);
    const refused = await submitAudio(sim, { text: 'third' });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ message: 'Too Many Attempts.' });
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('x-ratelimit-type')).toBe('minute');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(sim.stats.accepted).toHaveLength(2);
    expect(sim.stats.rateLimited).toEqual({ 'submit:txt2audio': 1 });
    // Other classes are counted apart, and models/balance are never limited.
    expect((await call(sim, '/api/v1/client/balance')).headers.get('x-ratelimit-limit')).toBeNull();
    await sleep(420);
    expect((await submitAudio(sim, { text: 'third' })).status).toBe(200);
  });

  it('does not count a 429 as a request', async () => {
    sim = await startSimulator({ ...FAST, rateWindowMs: 300, rateLimits: { status: { perWindow: 1 } } });
    await sleep(300 - (Date.now() % 300) + 5);
    const path = '/api/v1/client/request-status/unknown';
    expect((await call(sim, path)).status).toBe(404);
    for (let i = 0; i < 3; i++) expect((await call(sim, path)).status).toBe(429);
    await sleep(310);
    const next = await call(sim, path);
    expect(next.status).toBe(404);
    expect(next.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(sim.stats.rateLimited).toEqual({ status: 3 });
  });

  it('enforces a daily cap with daily headers and a daily 429 that waits until 00:00 UTC', async () => {
    // Half an hour before the reset, on the simulator's clock.
    sim = await startSimulator({ ...FAST, clock: clockStoppedAt('2026-11-27T23:30:00Z'), rateWindowMs: 60_000, rateLimits: { price: { perWindow: 10, perDay: 2 } } });
    const price = () => call(sim, '/api/v1/client/img2video/price-calculation', { json: {} });
    const first = await price();
    expect(first.status).toBe(422);
    expect(first.headers.get('x-ratelimit-daily-limit')).toBe('2');
    expect(first.headers.get('x-ratelimit-daily-remaining')).toBe('1');
    await price();
    const refused = await price();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-type')).toBe('daily');
    expect(refused.headers.get('retry-after')).toBe('1800');
  });

  it("applies the basic plan's table (rate-limit.ts)", async () => {
    sim = await startSimulator({ ...FAST, plan: 'basic' });
    const answer = await submitAudio(sim);
    expect(answer.headers.get('x-ratelimit-limit')).toBe('5');
    expect(answer.headers.get('x-ratelimit-daily-limit')).toBe('300');
    expect(answer.headers.get('x-ratelimit-daily-remaining')).toBe('299');
  });
});
