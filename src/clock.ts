/**
 * Where the time of day comes from. The CLI builds `systemClock` and passes it down; the
 * simulator takes one in its options; a test gives both a clock set to the hour it needs.
 */
export interface Clock {
  /** Milliseconds since the epoch, as `Date.now()`. */
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };
