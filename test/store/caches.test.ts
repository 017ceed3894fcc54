import { describe, expect, it } from 'vitest';
import { useTempLedgers } from './helpers.js';

const HOUR_MS = 3_600_000;

describe('ledger caches', () => {
  const t = useTempLedgers();

  function clocked() {
    const clock = { nowMs: Date.parse('2025-01-01T00:00:00Z') };
    const ledger = t.open(undefined, { nowMs: () => clock.nowMs });
    return { ledger, clock };
  }

  it('serves a price while it is young enough and replaces it on a new quote', () => {
    const { ledger, clock } = clocked();
    ledger.putPrices([
      { key: 'Kokoro|af_sky|100', priceUsd: 0.0077, source: 'quoted' },
      { key: 'Kokoro|af_sky|200', priceUsd: 0.0154, source: 'derived' },
    ]);
    clock.nowMs += 2 * HOUR_MS;
    expect(ledger.getPrice('Kokoro|af_sky|100', 3 * HOUR_MS)).toEqual({ priceUsd: 0.0077, source: 'quoted', ageMs: 2 * HOUR_MS });
    expect(ledger.getPrice('Kokoro|af_sky|100', HOUR_MS)).toBeUndefined();
    expect(ledger.getPrice('unknown', 3 * HOUR_MS)).toBeUndefined();

    ledger.putPrices([{ key: 'Kokoro|af_sky|100', priceUsd: 0.008, source: 'quoted' }]);
    expect(ledger.getPrice('Kokoro|af_sky|100', 0)).toEqual({ priceUsd: 0.008, source: 'quoted', ageMs: 0 });
  });

  it('keeps one models catalogue per base URL, parsed, with an age limit', () => {
    const { ledger, clock } = clocked();
    const models = [{ slug: 'Kokoro', languages: [{ slug: 'en-us' }] }];
    ledger.putCatalogue('https://api.deapi.ai', models);
    ledger.putCatalogue('http://127.0.0.1:4010', []);
    clock.nowMs += HOUR_MS;
    expect(ledger.getCatalogue('https://api.deapi.ai', 2 * HOUR_MS)).toEqual(models);
    expect(ledger.getCatalogue('https://api.deapi.ai', HOUR_MS - 1)).toBeUndefined();
    expect(ledger.getCatalogue('http://127.0.0.1:4010', 2 * HOUR_MS)).toEqual([]);
    expect(ledger.getCatalogue('http://elsewhere', 2 * HOUR_MS)).toBeUndefined();
  });

  it('stores meta values and survives re-opening', () => {
    const { ledger } = clocked();
    expect(ledger.getMeta('budget')).toBeUndefined();
    ledger.setMeta('budget', '25');
    ledger.setMeta('budget', '30');
    ledger.putPrices([{ key: 'k', priceUsd: 1, source: 'quoted' }]);
    ledger.close();
    const again = t.open();
    expect(again.getMeta('budget')).toBe('30');
    expect(again.getPrice('k', Number.POSITIVE_INFINITY)?.priceUsd).toBe(1);
  });
});
