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
});
