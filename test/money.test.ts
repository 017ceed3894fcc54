import { describe, expect, it } from 'vitest';
import { budgetFit, decimalUsd, formatUsd, microToUsd, sumMicro, usdToMicro, withinBudget } from '../src/money.js';

describe('money in whole micro-dollars', () => {
  it('takes dollars in: prices round up, budgets round down, float noise is ignored', () => {
    expect(usdToMicro(0.000077, 'up')).toBe(77);
    expect(usdToMicro(0.1 + 0.2, 'down')).toBe(300_000);
    expect(usdToMicro(0.00003388, 'up')).toBe(34);
    expect(usdToMicro(0.00003388, 'down')).toBe(33);
    expect(usdToMicro(25, 'down')).toBe(25_000_000);
  });

  it('gives dollars out exactly: JSON numbers, CSV text, and text for people', () => {
    expect(microToUsd(77)).toBe(0.000077);
    expect(JSON.stringify(microToUsd(849_690))).toBe('0.84969');
    expect(JSON.stringify(microToUsd(1))).toBe('0.000001');
    expect(decimalUsd(77)).toBe('0.000077');
    expect(decimalUsd(12_500_000)).toBe('12.5');
    expect(decimalUsd(3_000_000)).toBe('3');
    expect(decimalUsd(-250_000)).toBe('-0.25');
    expect(formatUsd(12_345_000)).toBe('$12.35');
    expect(formatUsd(1_234_567_891_000)).toBe('$1,234,567.89');
    expect(formatUsd(420_000)).toBe('$0.42');
    expect(formatUsd(42_300)).toBe('$0.0423');
    expect(formatUsd(77)).toBe('$0.000077');
    expect(formatUsd(0)).toBe('$0.00');
    expect(formatUsd(-2_500_000)).toBe('-$2.50');
  });

  it('adds 10,000 prices of $0.000077 to exactly $0.77', () => {
    expect(sumMicro(Array.from({ length: 10_000 }, () => 77))).toBe(770_000);
  });

  it('one budget rule: met exactly is within, one µUSD over is not, no budget is no cap', () => {
    expect(withinBudget(100_000, 200_000, 300_000)).toBe(true);
    expect(withinBudget(100_001, 200_000, 300_000)).toBe(false);
    expect(withinBudget(5e12, 5e12, null)).toBe(true);
    const fitCount = (prices: number[], spent: number, budget: number | null): number => {
      const fit = budgetFit(spent, budget);
      for (const price of prices) fit.take(price);
      return fit.count;
    };
    expect(fitCount([1, 2, 3, 4], 2, 8)).toBe(3);
    expect(fitCount([1, 2, 3, 4], 0, null)).toBe(4);
    expect(fitCount([5, 1], 0, 4)).toBe(0);
  });
});
