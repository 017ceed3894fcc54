import { EPSILON_USD } from './money.js';

/**
 * The --partial rule, shared by the cost report and the run plan so both name the same jobs:
 * how many of `pricesUsd` (in manifest order) fit under `budgetUsd` on top of what is already
 * spent. It stops at the first job that does not fit, so a partial run sends a prefix of the
 * manifest: predictable, and easy to say in a report.
 */
export function fitCount(pricesUsd: readonly number[], spentUsd: number, budgetUsd: number | null): number {
  if (budgetUsd === null) return pricesUsd.length;
  let count = 0;
  let runningUsd = spentUsd;
  for (const priceUsd of pricesUsd) {
    if (runningUsd + priceUsd > budgetUsd + EPSILON_USD) break;
    runningUsd += priceUsd;
    count += 1;
  }
  return count;
}
