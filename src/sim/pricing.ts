/**
 * The simulator's price laws. Each kind computes a linear price (its file); 'linear' keeps it,
 * 'minimum' and 'rounded' break linearity in the ways a real price list might, so clients that
 * derive prices from probes must notice and fall back to quoting.
 */

export type PricingMode = 'linear' | 'minimum' | 'rounded';

const MINIMUM_USD = 0.0005;

const round8 = (usd: number): number => Math.round(usd * 1e8) / 1e8;

export function applyMode(linearUsd: number, mode: PricingMode): number {
  switch (mode) {
    case 'linear':
      return round8(linearUsd);
    case 'minimum':
      return round8(Math.max(MINIMUM_USD, linearUsd));
    case 'rounded':
      // The small epsilon keeps 0.0012 from becoming 0.0013 through float noise.
      return Math.ceil(round8(linearUsd) * 1e4 - 1e-9) / 1e4;
  }
}
