/**
 * Money, once. Inside mediabatch every amount is a whole number of micro-dollars (µUSD, one
 * millionth of a dollar): sums and comparisons are exact integers, so a budget check never hinges
 * on float noise and no report shows 0.8496903799999997. Dollars appear only at the edges: a
 * price the service answers or a budget a person types come in through `usdToMicro`; what is
 * printed or written goes out through `formatUsd`, `microToUsd` (JSON) and `decimalUsd` (CSV).
 */

/** A whole number of micro-dollars. */
export type MicroUsd = number;

const MICRO_PER_USD = 1_000_000;

/**
 * Dollars from outside as µUSD. A price is rounded `up` (what may be charged is never counted
 * short), a budget `down` (a cap never grows); a value within float noise ($1e-9) of a whole
 * µUSD is that µUSD either way.
 */
export function usdToMicro(usd: number, direction: 'up' | 'down'): MicroUsd {
  const micro = usd * MICRO_PER_USD;
  const nearest = Math.round(micro);
  // Within a thousandth of a micro-dollar ($1e-9) is float noise: no price or budget is that fine.
  if (Math.abs(micro - nearest) < 1e-3) return nearest;
  return direction === 'up' ? Math.ceil(micro) : Math.floor(micro);
}

/** For JSON documents: at most six decimals, exactly (77 µUSD is 0.000077). */
export function microToUsd(micro: MicroUsd): number {
  return micro / MICRO_PER_USD;
}

/** For CSV cells and messages that must stay exact: `0.000077`, `12.5`, `-0.25`; never an exponent. */
export function decimalUsd(micro: MicroUsd): string {
  const sign = micro < 0 ? '-' : '';
  const abs = Math.abs(micro);
  const whole = Math.floor(abs / MICRO_PER_USD);
  const fraction = String(abs % MICRO_PER_USD).padStart(6, '0').replace(/0+$/, '');
  return fraction === '' ? `${sign}${whole}` : `${sign}${whole}.${fraction}`;
}

/**
 * Money as people read it: `$12.34` from a dollar up, three significant digits below
 * (`$0.000077`, `$0.0423`), never scientific notation. Exact values are in JSON and CSV.
 */
export function formatUsd(micro: MicroUsd): string {
  if (micro === 0) return '$0.00';
  const sign = micro < 0 ? '-' : '';
  const abs = Math.abs(micro) / MICRO_PER_USD;
  if (abs >= 1) return `${sign}$${groupThousands(abs.toFixed(2))}`;
  const decimals = Math.min(6, Math.max(2, 2 - Math.floor(Math.log10(abs))));
  return `${sign}$${abs.toFixed(decimals).replace(/(\.\d\d\d*?)0+$/, '$1')}`;
}

function groupThousands(text: string): string {
  const [whole = '', fraction] = text.split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

export function sumMicro(values: Iterable<MicroUsd>): MicroUsd {
  let sum = 0;
  for (const value of values) sum += value;
  return sum;
}

/**
 * The budget rule, the one place it is written: what the ledger counts as spent plus what is
 * about to be added must stay within the budget; `null` is no budget. Estimate, the run's plan
 * and the ledger's reservation before each submit all ask this.
 */
export function withinBudget(spent: MicroUsd, adding: MicroUsd, budget: MicroUsd | null): boolean {
  return budget === null || spent + adding <= budget;
}

/** How far `spent + adding` goes past the budget: 0 when it holds (the rule withinBudget states). */
export function overBudgetBy(spent: MicroUsd, adding: MicroUsd, budget: MicroUsd | null): MicroUsd {
  return budget === null ? 0 : Math.max(0, spent + adding - budget);
}

/**
 * What fits under the budget on top of what is spent, taking prices in manifest order: `take`
 * answers whether the next price fits and counts it if so. It stops at the first that does not
 * fit (every later `take` answers false), so `--partial` sends a prefix of the manifest:
 * predictable, and easy to say in a report. Prices stream in, so a million jobs fit in no memory.
 */
export function budgetFit(spent: MicroUsd, budget: MicroUsd | null): { take(price: MicroUsd): boolean; readonly count: number; readonly micro: MicroUsd } {
  let count = 0;
  let micro = 0;
  let full = false;
  return {
    take(price) {
      if (full || !withinBudget(spent + micro, price, budget)) {
        full = true;
        return false;
      }
      count += 1;
      micro += price;
      return true;
    },
    get count() {
      return count;
    },
    get micro() {
      return micro;
    },
  };
}
