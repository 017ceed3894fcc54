/** Float sums of many small prices drift by far less than this; comparisons against a cap allow it. */
export const EPSILON_USD = 1e-9;

/** Precision beyond this is float noise, not a price step the service uses. */
const MAX_DECIMALS = 12;

/** Kahan summation: 10,000 prices of $0.000077 must add up to what a person would compute. */
export function sumUsd(values: Iterable<number>): number {
  let sum = 0;
  let carry = 0;
  for (const value of values) {
    const y = value - carry;
    const t = sum + y;
    carry = t - sum - y;
    sum = t;
  }
  return cleanUsd(sum);
}

/** Drops float noise (0.30000000000000004) so totals read and serialise as a person expects. */
export function cleanUsd(value: number): number {
  return Number(value.toFixed(10));
}

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
