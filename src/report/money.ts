/**
 * Money as people read it: `$12.34` from a dollar up, three significant digits below
 * (`$0.000077`, `$0.0423`), never scientific notation. Exact values live in JSON and CSV.
 */
export function formatUsd(amountUsd: number): string {
  const sign = amountUsd < 0 ? '-' : '';
  const abs = Math.abs(amountUsd);
  if (abs < 1e-10) return '$0.00';
  if (abs >= 1) return `${sign}$${groupThousands(abs.toFixed(2))}`;
  const decimals = Math.min(10, Math.max(2, 2 - Math.floor(Math.log10(abs))));
  return `${sign}$${trimZeros(abs.toFixed(decimals))}`;
}

/** Keeps at least two decimals: `0.0000770` → `0.000077`, `0.420` → `0.42`. */
function trimZeros(text: string): string {
  return text.replace(/(\.\d\d\d*?)0+$/, '$1');
}

function groupThousands(text: string): string {
  const [whole = '', fraction] = text.split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

/** A number as plain decimal text for CSV cells: `7.7e-7` becomes `0.00000077`, exactly. */
export function plainNumber(value: number): string {
  const text = String(value);
  const match = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (match === null) return text;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match;
  const digits = whole + fraction;
  const point = 1 + Number(exponent);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** `1,234` for counts in text reports. */
export function formatCount(count: number): string {
  return groupThousands(String(count));
}
