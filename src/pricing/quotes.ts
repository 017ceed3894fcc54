/**
 * Arithmetic on prices as the service writes them (dollars, a few decimals): how fine its quotes
 * are, and float noise to ignore when comparing two quotes. Money the tool counts is micro-dollars
 * (src/money.ts).
 */

/** Two quotes closer than this are the same price. */
export const EPSILON_USD = 1e-9;

/** Precision beyond this is float noise, not a price step the service uses. */
const MAX_DECIMALS = 12;

/** Decimal places of a number as written in its shortest form, reading `7.7e-7` as 8 places. */
export function decimalsOf(value: number): number {
  const [mantissa = '', exponent = '0'] = Math.abs(value).toString().split('e');
  const fraction = mantissa.split('.')[1] ?? '';
  return Math.min(MAX_DECIMALS, Math.max(0, fraction.length - Number(exponent)));
}

/** Rounds up to a multiple of 10^-decimals, ignoring float noise just above a multiple. */
export function ceilToDecimals(value: number, decimals: number): number {
  const unit = 10 ** -decimals;
  // Without the slack, 0.0001 stored as 0.00010000000000000002 would round up a whole unit.
  const units = Math.ceil(value / unit - 1e-6);
  return Number((units * unit).toFixed(decimals));
}
