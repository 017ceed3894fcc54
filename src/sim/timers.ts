/**
 * What makes the simulator's story repeatable: seeded random streams (mulberry32) for faults and
 * job outcomes, each its own so a given seed and order of requests always give the same story,
 * and its pending timers (refunds, webhook attempts, latency), cleared together when it closes.
 */
export type Random = () => number;

/** A generator of floats in [0, 1), fully determined by `seed`. */
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

/** Timers that do not outlive the simulator. */
export class Timers {
  private readonly pending = new Set<NodeJS.Timeout>();
  closed = false;

  /** Runs `run` in `ms` unless closed first; `unref`: without holding the process open. */
  after(ms: number, run: () => void, unref = false): void {
    if (this.closed) return;
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      run();
    }, Math.max(0, ms));
    if (unref) timer.unref();
    this.pending.add(timer);
  }

  sleep(ms: number): Promise<void> {
    return ms <= 0 ? Promise.resolve() : new Promise((resolve) => this.after(ms, resolve));
  }

  close(): void {
    this.closed = true;
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
  }
}
