import type { StoreContext } from './context.js';

export interface CachedPrice {
  priceUsd: number;
  source: string;
  ageMs: number;
}

export interface PriceEntry {
  /** The price parameters, canonicalised by pricing/ (never a token). */
  key: string;
  priceUsd: number;
  source: string;
}

/** Things worth keeping between runs so that re-estimating costs no calls: prices, models, notes. */
export interface LedgerCaches {
  /** The cached price for `key` if it is at most `maxAgeMs` old. */
  getPrice(key: string, maxAgeMs: number): CachedPrice | undefined;
  putPrices(rows: readonly PriceEntry[]): void;
  /** Drops cached prices that turned out to be out of date. */
  forgetPrices(keys: readonly string[]): void;
  /** The parsed models catalogue of `baseUrl` if it is at most `maxAgeMs` old. */
  getCatalogue(baseUrl: string, maxAgeMs: number): unknown;
  putCatalogue(baseUrl: string, json: unknown): void;
  getMeta(key: string): string | undefined;
  setMeta(key: string, value: string): void;
}

export function createCaches(ctx: StoreContext): LedgerCaches {
  const { db } = ctx;
  const selectPrice = db.prepare<[string], { price_usd: number; source: string; created_at: string }>(
    'SELECT price_usd, source, created_at FROM prices WHERE key = ?',
  );
  const upsertPrice = db.prepare(
    `INSERT INTO prices (key, price_usd, source, created_at) VALUES (@key, @priceUsd, @source, @now)
     ON CONFLICT (key) DO UPDATE SET price_usd = excluded.price_usd, source = excluded.source,
       created_at = excluded.created_at`,
  );
  const selectCatalogue = db.prepare<[string], { json: string; fetched_at: string }>(
    'SELECT json, fetched_at FROM catalogue WHERE base_url = ?',
  );
  const upsertCatalogue = db.prepare(
    `INSERT INTO catalogue (base_url, fetched_at, json) VALUES (@baseUrl, @now, @json)
     ON CONFLICT (base_url) DO UPDATE SET fetched_at = excluded.fetched_at, json = excluded.json`,
  );
  const selectMeta = db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?');
  const upsertMeta = db.prepare(
    'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
  );
  const ageMs = (iso: string): number => ctx.nowMs() - Date.parse(iso);

  const putPrices = db.transaction((rows: readonly PriceEntry[]) => {
    const now = ctx.nowIso();
    for (const row of rows) upsertPrice.run({ key: row.key, priceUsd: row.priceUsd, source: row.source, now });
  });
  const deletePrice = db.prepare('DELETE FROM prices WHERE key = ?');
  const forgetPrices = db.transaction((keys: readonly string[]) => {
    for (const key of keys) deletePrice.run(key);
  });

  return {
    getPrice: (key, maxAgeMs) => {
      const row = selectPrice.get(key);
      if (row === undefined) return undefined;
      const age = ageMs(row.created_at);
      return age <= maxAgeMs ? { priceUsd: row.price_usd, source: row.source, ageMs: age } : undefined;
    },
    putPrices: (rows) => putPrices.immediate(rows),
    forgetPrices: (keys) => forgetPrices.immediate(keys),
    getCatalogue: (baseUrl, maxAgeMs) => {
      const row = selectCatalogue.get(baseUrl);
      if (row === undefined || ageMs(row.fetched_at) > maxAgeMs) return undefined;
      return JSON.parse(row.json) as unknown;
    },
    putCatalogue: (baseUrl, json) => {
      upsertCatalogue.run({ baseUrl, now: ctx.nowIso(), json: JSON.stringify(json) });
    },
    getMeta: (key) => selectMeta.get(key)?.value,
    setMeta: (key, value) => {
      upsertMeta.run(key, value);
    },
  };
}
