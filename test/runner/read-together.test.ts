import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { readTogether, WINDOW_ROWS } from '../../src/runner/windows.js';

/** Items 0..count-1, counting how far the walk has gone ahead of its readers. */
function walk(count: number, failAt?: number): { items: AsyncGenerator<number>; produced: () => number } {
  let produced = 0;
  async function* items(): AsyncGenerator<number> {
    for (let i = 0; i < count; i += 1) {
      if (i === failAt) throw new Error(`the walk broke at ${i}`);
      produced += 1;
      yield i;
    }
  }
  return { items: items(), produced: () => produced };
}

async function collect(rows: AsyncIterable<number>, seen: number[], delayEvery?: number): Promise<void> {
  for await (const row of rows) {
    seen.push(row);
    if (delayEvery !== undefined && row % delayEvery === 0) await sleep(1);
  }
}

describe('readTogether: one walk, several readers', () => {
  it('gives every reader every item in order, and the walk waits for the slowest', async () => {
    const count = 10 * WINDOW_ROWS;
    const { items, produced } = walk(count);
    const fast: number[] = [];
    const slow: number[] = [];
    let furthestAhead = 0;
    await readTogether(items, [
      (rows) => collect(rows, fast),
      async (rows) => {
        for await (const row of rows) {
          slow.push(row);
          furthestAhead = Math.max(furthestAhead, produced() - slow.length);
          if (row % 100 === 0) await sleep(1);
        }
      },
    ]);
    const all = Array.from({ length: count }, (_, i) => i);
    expect(fast).toEqual(all);
    expect(slow).toEqual(all);
    // Bounded by the buffers between the walk and each reader (a window each), never the whole walk.
    expect(furthestAhead).toBeLessThanOrEqual(3 * WINDOW_ROWS);
    expect(furthestAhead).toBeLessThan(count / 2);
  });

  it('a reader that fails leaves the others reading to the end, then fails with its error', async () => {
    const count = 3 * WINDOW_ROWS;
    const whole: number[] = [];
    let settledWhole = false;
    const result = readTogether(walk(count).items, [
      async (rows) => {
        await collect(rows, whole, 50);
        settledWhole = true;
      },
      async (rows) => {
        for await (const row of rows) if (row === 10) throw new Error('disk full');
      },
    ]);
    await expect(result).rejects.toThrow('disk full');
    // Nothing is left writing behind the failure.
    expect(settledWhole).toBe(true);
    expect(whole).toHaveLength(count);
  });

  it('a walk that fails fails every reader with its error', async () => {
    const reasons: string[] = [];
    const reader = async (rows: AsyncIterable<number>): Promise<void> => {
      try {
        for await (const _row of rows);
      } catch (error) {
        reasons.push((error as Error).message);
        throw error;
      }
    };
    await expect(readTogether(walk(2 * WINDOW_ROWS, 700).items, [reader, reader, reader])).rejects.toThrow('the walk broke at 700');
    expect(reasons).toEqual(['the walk broke at 700', 'the walk broke at 700', 'the walk broke at 700']);
  });
});
