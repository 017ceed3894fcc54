/**
 * A seeded PRNG (mulberry32). Faults and job outcomes draw from their own generators so a
 * given seed and a given order of requests always give the same story.
 */
export type Random = () => number;

/** Returns a generator of floats in [0, 1), fully determined by `seed`. */
export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
