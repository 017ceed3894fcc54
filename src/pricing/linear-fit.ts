/**
 * Deriving the prices of a kind priced by text length from a few probes, and why it is safe.
 *
 * Probes sit at the smallest and the largest length actually present in the group (plus evenly
 * spaced ones between). The rate is fitted through the origin from the largest probe, r = p(max)/max,
 * and linearity counts as confirmed only if EVERY probe agrees with r·n within one rounding unit
 * of the quotes (plus a tiny relative epsilon for float noise).
 *
 * - A minimum charge or a fixed fee (p = a + b·n) lifts the price at the smallest length above
 *   r·min, so the smallest probe disagrees and the group falls back to one quote per length.
 * - If the true law is affine (linear, fixed fee, or a minimum charge that does not bite within
 *   [min, max]), the error p(n) − r·n is itself affine in n: zero at max, within one unit at min,
 *   hence within one unit everywhere between. Lengths outside the probed range are never derived.
 * - Derived prices are rounded UP to the quotes' precision, so against a service that rounds up
 *   (p = ceil(r₀·n)) a derived price is never below the quote, and against any other rounding it
 *   is never below it by more than one unit.
 * - The rounding unit is the finest seen among the probes. Probes that happen to land on coarser
 *   values make the unit coarser: tolerance and rounding-up grow with it, so a derived price may
 *   sit up to that coarser unit above (and, under a fee smaller than it, below) the quote.
 * - Laws that are not affine (tiers) are caught by the middle probes. The residual risk is a law
 *   that bends between probes while every probe still sits on the line; more probes narrow it.
 */
export interface LinearFit {
  ratePerCharUsd: number;
  /** Decimal places the service's quotes use: derived prices are rounded up to this. */
  decimals: number;
  /** The probed range: prices are derived only for lengths inside it. */
  minChars: number;
  maxChars: number;
}

const RELATIVE_EPSILON = 1e-9;

// Arithmetic on prices as the service writes them (dollars, a few decimals); money the tool
// counts is micro-dollars (src/money.ts).

/** Two quotes closer than this are the same price. */
export const EPSILON_USD = 1e-9;

/** Precision beyond this is float noise, not a price step the service uses. */
const MAX_DECIMALS = 12;

/** Decimal places of a number as written in its shortest form, reading `7.7e-7` as 8 places. */
function decimalsOf(value: number): number {
  const [mantissa = '', exponent = '0'] = Math.abs(value).toString().split('e');
  const fraction = mantissa.split('.')[1] ?? '';
  return Math.min(MAX_DECIMALS, Math.max(0, fraction.length - Number(exponent)));
}

/** Rounds up to a multiple of 10^-decimals, ignoring float noise just above a multiple. */
function ceilToDecimals(value: number, decimals: number): number {
  const unit = 10 ** -decimals;
  // Without the slack, 0.0001 stored as 0.00010000000000000002 would round up a whole unit.
  const units = Math.ceil(value / unit - 1e-6);
  return Number((units * unit).toFixed(decimals));
}

/** The smallest, the largest, and evenly spaced lengths between them, at most `probes` in all. */
export function probeLengths(sortedLengths: readonly number[], probes: number): number[] {
  const count = Math.min(sortedLengths.length, Math.max(2, Math.floor(probes)));
  const last = sortedLengths.length - 1;
  const picked = new Set<number>();
  for (let i = 0; i < count; i += 1) {
    const length = sortedLengths[Math.round((i * last) / (count - 1))];
    if (length !== undefined) picked.add(length);
  }
  return [...picked];
}

/** A fit through the origin confirmed by every probe, or undefined when any probe disagrees. */
export function fitLinear(quotes: readonly { chars: number; priceUsd: number }[]): LinearFit | undefined {
  if (quotes.length < 2) return undefined;
  const sorted = [...quotes].sort((a, b) => a.chars - b.chars);
  const smallest = sorted[0];
  const largest = sorted[sorted.length - 1];
  if (smallest === undefined || largest === undefined || largest.chars <= 0) return undefined;
  const decimals = Math.max(...sorted.map((q) => decimalsOf(q.priceUsd)));
  const unitUsd = 10 ** -decimals;
  const ratePerCharUsd = largest.priceUsd / largest.chars;
  const agrees = sorted.every((q) => {
    const predicted = ratePerCharUsd * q.chars;
    const tolerance = unitUsd + RELATIVE_EPSILON * Math.max(Math.abs(predicted), Math.abs(q.priceUsd));
    return Math.abs(q.priceUsd - predicted) <= tolerance;
  });
  if (!agrees) return undefined;
  return { ratePerCharUsd, decimals, minChars: smallest.chars, maxChars: largest.chars };
}

export function coversLength(fit: LinearFit, chars: number): boolean {
  return chars >= fit.minChars && chars <= fit.maxChars;
}

export function deriveLinearPrice(fit: LinearFit, chars: number): number {
  return ceilToDecimals(fit.ratePerCharUsd * chars, fit.decimals);
}
