import { describe, expect, it } from 'vitest';
import { clockTime, formatDuration, stamp, untilText } from '../../src/cli/clock.js';
import { etaMs, settleRatePerS, TimeLeft } from '../../src/cli/eta.js';
import { describeEvent, pauseText } from '../../src/cli/event-text.js';
import { pricingLine } from '../../src/cli/pricing-progress.js';
import { formatRate, progressLine } from '../../src/cli/progress.js';
import { createRunProgress, limitsOf } from '../../src/runner/index.js';

const at = (iso: string): number => Date.parse(iso);
const PARIS = 'Europe/Paris';
const NEW_YORK = 'America/New_York';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('local times for people', () => {
  it('prints the wall clock of the zone given', () => {
    const ms = at('2025-01-15T13:02:31Z');
    expect(clockTime(ms, PARIS)).toBe('14:02:31');
    expect(clockTime(ms, NEW_YORK)).toBe('08:02:31');
    expect(clockTime(ms, 'UTC')).toBe('13:02:31');
    expect(stamp('1,204/5,000 done', ms, PARIS)).toBe('[14:02:31] 1,204/5,000 done');
  });

  it('says until when a pause lasts in local time and how long, with the date when it is not today', () => {
    // The daily reset, 00:00 UTC: 19:00 the same day in New York, 01:00 the next day in Paris.
    const reset = at('2025-01-16T00:00:00Z');
    const now = at('2025-01-15T20:18:00Z');
    expect(pauseText({ untilMs: reset, reason: 'the daily limit' }, now, NEW_YORK)).toBe('paused by the daily limit until 19:00 (in 3h42m)');
    expect(pauseText({ untilMs: reset, reason: 'the daily limit' }, now, PARIS)).toBe('paused by the daily limit until 2025-01-16 01:00 (in 3h42m)');
    // Seconds when the minute is not whole; a part of a second rounds up, never down.
    expect(untilText(at('2025-01-15T20:18:30.200Z'), now, PARIS)).toBe('21:18:31 (in 31s)');
    expect(untilText(at('2025-01-18T03:00:00Z'), now, 'UTC')).toBe('2025-01-18 03:00 (in 2d07h)');
  });

  it('says a pause event in the same words, once, with the class it holds', () => {
    const now = at('2025-01-15T20:18:00Z');
    const event = { kind: 'paused', what: 'submit:txt2audio', untilMs: at('2025-01-16T00:00:00Z'), reason: 'the daily limit' } as const;
    expect(describeEvent(event, now, NEW_YORK)).toBe('paused   txt2audio submits by the daily limit until 19:00 (in 3h42m)');
    expect(describeEvent({ ...event, what: 'status', reason: 'a rate limit (HTTP 429)', untilMs: now + 30_000 }, now, NEW_YORK)).toBe(
      'paused   status calls by a rate limit (HTTP 429) until 15:18:30 (in 30s)',
    );
  });

  it('rounds durations up, in their two largest units', () => {
    expect([0, 0.2, 59, 59.5, 60, 239.5, 3599.5, 3600, 13_320, 86_399, 86_400, 97_200].map(formatDuration)).toEqual([
      '0s',
      '1s',
      '59s',
      '1m00s',
      '1m00s',
      '4m00s',
      '1h00m',
      '1h00m',
      '3h42m',
      '1d00h',
      '1d00h',
      '1d03h',
    ]);
  });
});

describe('the time left of a run', () => {
  const basic = { limits: limitsOf('basic'), name: 'basic' };
  const unlimited = { limits: limitsOf('unlimited'), name: 'unlimited' };
  const now = at('2025-01-15T20:18:00Z');

  it('is never shorter than a known pause, however fast the run went before it', () => {
    const pausedUntilMs = now + 3 * HOUR + 42 * MINUTE;
    const fast = { nowMs: now, leftJobs: 10, toSend: {}, plan: unlimited, pausedUntilMs, settledGained: 1_000, elapsedMs: 10_000 };
    expect(etaMs(fast)).toBe(3 * HOUR + 42 * MINUTE);
    // With nothing seen yet, the pause alone still says something.
    expect(etaMs({ ...fast, settledGained: 0 })).toBe(3 * HOUR + 42 * MINUTE);
    // Basic: the pause, then the pace of what is left (10 speech submits at 5/min after it).
    expect(etaMs({ ...fast, toSend: { txt2audio: 10 }, plan: basic })).toBe(3 * HOUR + 42 * MINUTE + 2 * MINUTE);
  });

  it("follows the plan's pace rather than the last seconds' rate", () => {
    // Basic, 100 speech jobs still to send: the pace (5/min) says 20 minutes, whatever came before.
    const input = { nowMs: now, leftJobs: 100, toSend: { txt2audio: 100 }, plan: basic, pausedUntilMs: 0, settledGained: 5, elapsedMs: 1_000 };
    expect(etaMs(input)).toBe(20 * MINUTE);
    // The same at any moment between two submits: it does not climb while the run waits its turn.
    expect(etaMs({ ...input, elapsedMs: 11_000 })).toBe(20 * MINUTE);
    // Past a daily cap (Basic: 200 status calls a day) the rest waits for the next day, as `estimate` counts it.
    expect(etaMs({ ...input, leftJobs: 300, toSend: { txt2audio: 300 } })).toBe(24 * HOUR + 2 * MINUTE);
    // A service slower than the pace (jobs generating for long) makes the rate seen win.
    expect(etaMs({ ...input, settledGained: 1, elapsedMs: 60_000 })).toBe(100 * MINUTE);
    expect(etaMs({ ...input, leftJobs: 0 })).toBeUndefined();
    expect(etaMs({ ...input, plan: unlimited, settledGained: 0 })).toBeUndefined();
  });

  it('never has a negative rate, even when the counts went down (in-doubt jobs sent again)', () => {
    expect(settleRatePerS(-3, 10_000)).toBe(0);
    expect(settleRatePerS(0, 0)).toBe(0);
    expect(settleRatePerS(6, 60_000)).toBe(0.1);
    expect(formatRate(-0.3)).toBe('0.0 jobs/s');
    expect(formatRate(0.08)).toBe('4.8 jobs/min');
    expect(formatRate(12)).toBe('12.0 jobs/s');
  });

  it("learns from the run's events: the pauses they announce, the jobs they settle", () => {
    const run = { ...createRunProgress(), toSend: { txt2audio: 4 } };
    const time = new TimeLeft(unlimited, run, now);
    const until = now + 90 * MINUTE;
    time.onEvent({ kind: 'paused', what: 'status', untilMs: now + MINUTE, reason: 'a rate limit (HTTP 429)' });
    time.onEvent({ kind: 'paused', what: 'submit:txt2audio', untilMs: until, reason: 'the daily limit' });
    for (const id of ['a', 'b']) {
      time.onEvent({ kind: 'submitting', id });
      time.onEvent({ kind: 'submitted', id, requestId: `r-${id}` });
      time.onEvent({ kind: 'done', id, path: `/o/${id}.wav`, bytes: 1 });
    }
    time.onEvent({ kind: 'not_taken', id: 'c', reason: '429' });
    // Two settled in 10 s; the pause that ends last holds the ETA back.
    expect(time.view(now + 10_000, 4)).toEqual({ ratePerS: 0.2, pause: { untilMs: until, reason: 'the daily limit' }, etaMs: until - now - 10_000 });
    // Once it is over (no pace under --plan unlimited), the rate seen over the whole run says the rest.
    expect(time.view(until + 1, 4)).toEqual({ ratePerS: 2 / ((until + 1 - now) / 1000), pause: undefined, etaMs: (4 / (2 / ((until + 1 - now) / 1000))) * 1000 });
  });

  it('shows the pause and an ETA at least as long on the progress line', () => {
    const pause = { untilMs: at('2025-01-16T00:00:00Z'), reason: 'the daily limit' };
    const snap = { counts: { done: 1_204, submitted: 3, pending: 3_793 }, spentMicro: 1_230_000, budgetMicro: 5_000_000 };
    const eta = etaMs({ nowMs: now, leftJobs: 3_796, toSend: { txt2audio: 3_793 }, plan: basic, pausedUntilMs: pause.untilMs, settledGained: 1_204, elapsedMs: HOUR });
    const line = progressLine({ snap, total: 5_000, nowMs: now, ratePerS: settleRatePerS(1_204, HOUR), etaMs: eta, pause, timeZone: NEW_YORK });
    expect(line).toBe(
      '1,204/5,000 done · 3 running · 3,793 pending · 0 failed · 0 in doubt · 0 skipped · spent $1.23 of $5.00 · 20.1 jobs/min · ' +
        'paused by the daily limit until 19:00 (in 3h42m) · ETA 18d04h',
    );
  });
});

describe('what pricing waits for', () => {
  const basic = { limits: limitsOf('basic'), name: 'basic' };
  const now = at('2025-01-15T20:18:00Z');
  const calls = { jobsRead: 10, planned: 7, answered: 3, waitingForPace: 3, waitingForAnswer: 1 };

  it('names the price pace of the plan, a pause, or the answers it waits for', () => {
    expect(pricingLine(calls, basic, undefined, now)).toBe('pricing: 3/7 price calls answered; waiting for the price pace (Basic: 50/min, 200/day)');
    const pause = { untilMs: now + 42_000, reason: 'a rate limit (HTTP 429)' };
    expect(pricingLine(calls, basic, pause, now, NEW_YORK)).toBe(
      'pricing: 3/7 price calls answered; price calls paused by a rate limit (HTTP 429) until 15:18:42 (in 42s)',
    );
    expect(pricingLine({ ...calls, waitingForPace: 0 }, basic, undefined, now)).toBe('pricing: 3/7 price calls answered; waiting for the service to answer 1 call');
    const preparing = { jobsRead: 0, planned: 0, answered: 0, waitingForPace: 0, waitingForAnswer: 0 };
    expect(pricingLine(preparing, basic, undefined, now)).toBe('preparing: checking the manifest with the service before pricing it; no price call yet');
    expect(pricingLine({ ...preparing, jobsRead: 420_000 }, basic, undefined, now)).toBe(
      'preparing: checking the manifest with the service before pricing it (420,000 jobs read so far); no price call yet',
    );
  });
});
