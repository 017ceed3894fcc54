import type { Clock } from '../../src/clock.js';

const HOUR_MS = 3_600_000;

/**
 * The real clock moved by whole hours so that it reads `hourUtc` o'clock UTC (the minutes and
 * seconds stay the real ones), running on at the real pace so timers and job durations hold.
 * Given to the simulator, it puts the daily reset a known distance away whatever the hour: it
 * is 24 − `hourUtc` hours off, less the real minutes, and falls on a whole hour of the real clock.
 */
export function clockAtUtcHour(hourUtc: number): Clock {
  const offsetMs = ((hourUtc - new Date().getUTCHours() + 24) % 24) * HOUR_MS;
  return { nowMs: () => Date.now() + offsetMs };
}

/** A clock stopped at `iso`, for an answer that is read at one moment. */
export function clockStoppedAt(iso: string): Clock {
  const ms = Date.parse(iso);
  return { nowMs: () => ms };
}

/** A clock that reads `iso` now and runs on at the real pace. */
export function clockFrom(iso: string): Clock {
  const offsetMs = Date.parse(iso) - Date.now();
  return { nowMs: () => Date.now() + offsetMs };
}
