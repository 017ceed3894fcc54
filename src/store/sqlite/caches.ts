import type { StoreContext, Sync } from './context.js';
import type { CachedPrice, LedgerHandle, PlanLedger } from '../ledger.js';

type Caches = Pick<PlanLedger, 'getPrices' | 'putPrices' | 'forgetPrices' | 'getCatalogue' | 'putCatalogue'> &
  Pick<LedgerHandle, 'getMeta' | 'setMeta'>;

/** Things worth keeping between runs so that re-estimating costs no calls: prices, models, notes. */
export function createCaches(ctx: StoreContext): Sync<Caches> {
  const { db } = ctx;
  const selectPrices = db.prepare<[], { key: string; price_usd: number; source: string; created_at: string }>(
    'SELECT key, price_usd, source, created_at FROM prices',
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

  const deletePrice = db.prepare('DELETE FROM prices WHERE key = ?');

  return {
    getPrices: (maxAgeMs) => {
      const fresh = new Map<string, CachedPrice>();
      for (const row of selectPrices.all()) {
        const age = ageMs(row.created_at);
        if (age <= maxAgeMs) fresh.set(row.key, { priceUsd: row.price_usd, source: row.source, ageMs: age });
      }
      return fresh;
    },
    putPrices: (rows) => {
      const now = ctx.nowIso();
      for (const row of rows) upsertPrice.run({ key: row.key, priceUsd: row.priceUsd, source: row.source, now });
    },
    forgetPrices: (keys) => {
      for (const key of keys) deletePrice.run(key);
    },
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
