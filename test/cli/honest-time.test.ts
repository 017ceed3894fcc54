import { describe, expect, it } from 'vitest';
import { clockTime, describeEvent, formatDuration, pauseText, stamp, untilText } from '../../src/cli/event-text.js';
import { etaMs, formatRate, perSecond, pricingLine, progressLine, TimeLeft } from '../../src/cli/progress.js';
import { createRunProgress, limitsOf, type RunProgress } from '../../src/runner/index.js';

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

  const none = { submitted: 0, settled: 0, elapsedMs: 0 };

  it('is never shorter than a known pause, however fast the run went before it', () => {
    const untilMs = now + 3 * HOUR + 42 * MINUTE;
    const fast = { nowMs: now, leftJobs: 10, toSend: {}, plan: unlimited, pausedUntil: { status: untilMs }, following: true, seen: { submitted: 1_000, settled: 1_000, elapsedMs: 10_000 } };
    expect(etaMs(fast)).toBe(3 * HOUR + 42 * MINUTE);
    // With nothing seen yet, the pause alone still says something.
    expect(etaMs({ ...fast, seen: none })).toBe(3 * HOUR + 42 * MINUTE);
    // Basic: the class's pause, then the pace of what it has left (10 speech submits at 5/min after it).
    const speech = { ...fast, toSend: { txt2audio: 10 }, plan: basic, pausedUntil: { 'submit:txt2audio': untilMs } };
    expect(etaMs(speech)).toBe(3 * HOUR + 42 * MINUTE + 2 * MINUTE);
  });

  it("follows the plan's pace rather than the last seconds' rate", () => {
    // Basic, 100 speech jobs still to send: the pace (5/min) says 20 minutes, whatever came before.
    const input = { nowMs: now, leftJobs: 100, toSend: { txt2audio: 100 }, plan: basic, pausedUntil: {}, following: true, seen: { submitted: 5, settled: 5, elapsedMs: 1_000 } };
    expect(etaMs(input)).toBe(20 * MINUTE);
    // The same at any moment between two submits: it does not climb while the run waits its turn.
    expect(etaMs({ ...input, seen: { ...input.seen, elapsedMs: 11_000 } })).toBe(20 * MINUTE);
    // Past a daily cap (Basic: 200 status calls a day) the rest waits for the next day, as `estimate` counts it.
    expect(etaMs({ ...input, leftJobs: 300, toSend: { txt2audio: 300 } })).toBe(24 * HOUR + 2 * MINUTE);
    // A service slower than the pace (jobs generating for long) makes the rate seen win.
    expect(etaMs({ ...input, seen: { submitted: 5, settled: 1, elapsedMs: 60_000 } })).toBe(100 * MINUTE);
    expect(etaMs({ ...input, leftJobs: 0 })).toBeUndefined();
    expect(etaMs({ ...input, plan: unlimited, seen: none })).toBeUndefined();
  });

  it('takes each class at its own pace, side by side: the slowest, its pause included, sets the time', () => {
    // Basic: 10 speech jobs (5/min: 2 minutes) and 6 images (3/min: 2 minutes), under --no-wait.
    const input = { nowMs: now, leftJobs: 16, toSend: { txt2audio: 10, txt2img: 6 }, plan: basic, pausedUntil: {}, following: false, seen: none };
    expect(etaMs(input)).toBe(2 * MINUTE);
    // Images paused for 5 minutes by a 429: speech goes on meanwhile, so 7 minutes, not 9.
    expect(etaMs({ ...input, pausedUntil: { 'submit:txt2img': now + 5 * MINUTE } })).toBe(7 * MINUTE);
    // A pause of a class with nothing left to send holds nothing back.
    expect(etaMs({ ...input, toSend: { txt2audio: 10 }, pausedUntil: { 'submit:txt2img': now + 5 * MINUTE } })).toBe(2 * MINUTE);
    // Under --no-wait no job is polled, so the status pace and the jobs not settled do not count.
    expect(etaMs({ ...input, leftJobs: 100_000 })).toBe(2 * MINUTE);
    expect(etaMs({ ...input, toSend: {} })).toBeUndefined();
  });

  it('adds, after the last submit of a followed run, about the time a job has taken so far to generate and download', () => {
    // Basic, 10 speech jobs to send (2 minutes at 5/min). In 100 s since its first submit the run
    // sent 20 and settled 10: 0.1 job a second, 10 out, so a job takes about 100 s from its submit.
    const input = { nowMs: now, leftJobs: 20, toSend: { txt2audio: 10 }, plan: basic, pausedUntil: {}, following: true, seen: { submitted: 20, settled: 10, elapsedMs: 100_000 } };
    expect(etaMs(input)).toBe(2 * MINUTE + 100_000);
    // Under --no-wait the run ends with its last submit.
    expect(etaMs({ ...input, following: false, seen: { ...input.seen, submitted: 1_000 } })).toBe(2 * MINUTE);
  });

  it('never has a negative rate, even when the counts went down (in-doubt jobs sent again)', () => {
    expect(perSecond(-3, 10_000)).toBe(0);
    expect(perSecond(0, 0)).toBe(0);
    expect(perSecond(6, 60_000)).toBe(0.1);
    expect(formatRate(-0.3)).toBe('0.0 jobs/s');
    expect(formatRate(0.08)).toBe('4.8 jobs/min');
    expect(formatRate(12)).toBe('12.0 jobs/s');
    expect(formatRate(4.85, 'submits')).toBe('4.8 submits/s');
  });

  it("learns from the run's events: the pauses they announce, the submits it makes, the jobs they settle", () => {
    const run: RunProgress = { ...createRunProgress(), toSend: { txt2audio: 4 } };
    let clockMs = now;
    const time = new TimeLeft(unlimited, run, { nowMs: () => clockMs }, true);
    const until = now + 90 * MINUTE;
    time.onEvent({ kind: 'paused', what: 'status', untilMs: now + MINUTE, reason: 'a rate limit (HTTP 429)' });
    time.onEvent({ kind: 'paused', what: 'submit:txt2audio', untilMs: until, reason: 'the daily limit' });
    for (const id of ['a', 'b']) {
      time.onEvent({ kind: 'submitting', id });
      time.onEvent({ kind: 'submitted', id, requestId: `r-${id}` });
      time.onEvent({ kind: 'done', id, path: `/o/${id}.wav`, bytes: 1 });
    }
    time.onEvent({ kind: 'not_taken', id: 'c', reason: '429' });
    // Two submits in the 10 s since the first; the paused class holds the ETA back.
    clockMs = now + 10_000;
    expect(time.view(clockMs, 4)).toEqual({ rate: { perS: 0.2, what: 'submits' }, pause: { untilMs: until, reason: 'the daily limit' }, etaMs: until - clockMs });
    // Nothing left to send: the rate is of jobs settled, and once the pause is over (no pace
    // under --plan unlimited) the rate seen since the first submit says the rest.
    run.toSend = {};
    const later = until + 1;
    const ratePerS = 2 / ((later - now) / 1000);
    expect(time.view(later, 4)).toEqual({ rate: { perS: ratePerS, what: 'jobs' }, pause: undefined, etaMs: (4 / ratePerS) * 1000 });
  });

  it('shows the pause and an ETA at least as long on the progress line', () => {
    const pause = { untilMs: at('2025-01-16T00:00:00Z'), reason: 'the daily limit' };
    const snap = { counts: { done: 1_204, submitted: 3, pending: 3_793 }, spentMicro: 1_230_000, budgetMicro: 5_000_000 };
    // The speech pause runs beside the status polls (3,796 at 200 a day), which set the time.
    const seen = { submitted: 1_207, settled: 1_204, elapsedMs: HOUR };
    const toSend = { txt2audio: 3_793 };
    const eta = etaMs({ nowMs: now, leftJobs: 3_796, toSend, plan: basic, pausedUntil: { 'submit:txt2audio': pause.untilMs }, following: true, seen });
    const line = progressLine({ snap, total: 5_000, nowMs: now, rate: { perS: perSecond(1_204, HOUR), what: 'jobs' }, etaMs: eta, pause, timeZone: NEW_YORK });
    expect(line).toBe(
      '1,204/5,000 done · 3 running · 3,793 pending · 0 failed · 0 in doubt · 0 skipped · spent $1.23 of $5.00 · 20.1 jobs/min · ' +
        'paused by the daily limit until 19:00 (in 3h42m) · ETA 18d01h',
    );
  });

  it('counts the blocked jobs of a pipeline on the progress line, when there are any', () => {
    const snap = { counts: { done: 2, pending: 1, failed: 1, blocked: 3 }, spentMicro: 30_000, budgetMicro: null };
    const line = progressLine({ snap, total: 7, nowMs: now, rate: { perS: 0, what: 'jobs' }, etaMs: undefined, pause: undefined });
    expect(line).toBe('2/7 done · 0 running · 1 pending · 1 failed · 0 in doubt · 0 skipped · 3 blocked · spent $0.03 · 0.0 jobs/s');
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
