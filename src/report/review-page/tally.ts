import type { MicroUsd } from '../../money.js';

/** What the totals say about a set of jobs. */
export interface Tally {
  jobs: number;
  done: number;
  /** Failed or in doubt: the jobs a person must look at. */
  attention: number;
  /** The sum of every priced job's price: what these jobs cost, paid or not. */
  pricedMicro: MicroUsd;
  spentMicro: MicroUsd;
}

export function emptyTally(): Tally {
  return { jobs: 0, done: 0, attention: 0, pricedMicro: 0, spentMicro: 0 };
}

export function addToTally(tally: Tally, job: { state: string; priceMicro: MicroUsd | null; spentMicro: MicroUsd }): void {
  tally.jobs += 1;
  if (job.state === 'done') tally.done += 1;
  if (job.state === 'failed' || job.state === 'in_doubt') tally.attention += 1;
  tally.pricedMicro += job.priceMicro ?? 0;
  tally.spentMicro += job.spentMicro;
}

/**
 * Names numbered in the order they first come (the rows refer to them by number), each with its
 * tally. Past `maxNames` distinct names, the rest share one entry, `overflowName`: a million
 * distinct price groups must not become a million entries held while the page streams.
 */
export class NamedTallies {
  readonly names: string[] = [];
  readonly tallies: Tally[] = [];
  private readonly index = new Map<string, number>();

  constructor(
    private readonly maxNames: number,
    private readonly overflowName: string,
  ) {}

  /** The number of `name` (or of the overflow entry), counting the job in its tally. */
  add(name: string, job: Parameters<typeof addToTally>[1]): number {
    const known = this.index.has(name) || this.names.length < this.maxNames;
    const key = known ? name : `\0${this.overflowName}`;
    let at = this.index.get(key);
    if (at === undefined) {
      at = this.names.push(known ? name : this.overflowName) - 1;
      this.tallies.push(emptyTally());
      this.index.set(key, at);
    }
    addToTally(this.tallies[at]!, job);
    return at;
  }
}
