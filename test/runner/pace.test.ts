import { describe, expect, it } from 'vitest';
import { Pace } from '../../src/runner/pace.js';

describe('the pace of a class', () => {
  it('a pause that begins while a request waits for its token costs that pause, not a second spacing', async () => {
    // One request a second; the first is free.
    const pace = new Pace({ 'submit:txt2video': { perWindow: 1, windowMs: 1000 } }, { headroom: 1 });
    await pace.take('submit:txt2video');
    const startMs = Date.now();
    const second = pace.take('submit:txt2video').then(() => Date.now());
    // The answer to the first says the window is used up: the class pauses past the next token.
    pace.pause('submit:txt2video', startMs + 1300, 'the rate-limit window (X-RateLimit-Remaining: 0)');
    const sentMs = await second;
    expect(sentMs).toBeGreaterThanOrEqual(startMs + 1300);
    // Taking a second token after the pause would hold it until the one after, at 2 s.
    expect(sentMs).toBeLessThan(startMs + 1700);
  });

  it('tells a pause once and its end once: when the first request of the class goes again', async () => {
    const told: string[] = [];
    const pace = new Pace({}, { onPause: (cls) => told.push(`paused ${cls}`), onResume: (cls) => told.push(`resumed ${cls}`) });
    // Told: a pause of more than a second.
    pace.pause('submit:txt2audio', Date.now() + 1100, 'a rate limit (HTTP 429)');
    // The same window drawn again by another worker is no news.
    pace.pause('submit:txt2audio', Date.now() + 1200, 'a rate limit (HTTP 429)');
    await Promise.all([pace.take('submit:txt2audio'), pace.take('submit:txt2audio'), pace.take('price')]);
    await pace.take('submit:txt2audio');
    expect(told).toEqual(['paused submit:txt2audio', 'resumed submit:txt2audio']);
  });
});
