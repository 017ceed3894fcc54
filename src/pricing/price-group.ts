import { MediabatchError, ExitCode } from '../errors.js';
import { describeGroupKey, lengthKey, rateKeys } from './keys.js';
import { coversLength, deriveLinearPrice, fitLinear, probeLengths, type LinearFit } from './linear-fit.js';
import type { GroupMethod, PriceCache, PriceCacheRow, PriceSource } from './types.js';

/**
 * No single job costs more than this. A quote above it is not a price but a broken answer (a
 * unit mix-up, 1e308): summed into a budget it would make every figure meaningless.
 */
const MAX_JOB_PRICE_USD = 1000;

/** A price the service answered that cannot be a price: nothing is derived or spent from it. */
class InvalidPriceError extends MediabatchError {
  constructor(key: string, got: unknown) {
    const expected = `expected a price above $0 and at most $${MAX_JOB_PRICE_USD} a job`;
    const todo = 'Nothing was priced or sent from that answer; check --base-url, and try again later.';
    const message = `the price endpoint answered ${String(got)} for ${describeGroupKey(key)}; ${expected}. ${todo}`;
    super(message, { code: 'E_PRICE_INVALID', exitCode: ExitCode.auth });
  }
}

type KeyPrice = Pick<PriceCacheRow, 'priceUsd'> & { source: PriceSource };

export interface GroupOutcome {
  /** By full price key. */
  prices: Map<string, KeyPrice>;
  method: GroupMethod;
  calls: number;
  /** New rows for the cache: fresh quotes, derived prices and the fitted rate. */
  rows: PriceCacheRow[];
  /** Age of the oldest cache entry the prices rest on; null when none came from the cache. */
  cachedAgeMs: number | null;
}

/** What a group's pricing needs: the cache, and how many lengths to probe. */
export type GroupContext = { cache: PriceCache; probes: number };

/** A price of 0 would let any number of jobs through any budget: the service never charges nothing. */
function checkedPrice(priceUsd: number, key: string): number {
  if (!(priceUsd > 0) || priceUsd > MAX_JOB_PRICE_USD) throw new InvalidPriceError(key, priceUsd);
  return priceUsd;
}

/** A group priced per key is one key: one call, or none when cached. */
export async function priceKeyGroup(key: string, quote: () => Promise<number>, ctx: GroupContext): Promise<GroupOutcome> {
  const cached = ctx.cache.get(key);
  if (cached !== undefined) {
    const prices = new Map([[key, { priceUsd: cached.priceUsd, source: 'cached' as const }]]);
    return { prices, method: 'cached', calls: 0, rows: [], cachedAgeMs: cached.ageMs };
  }
  const rows: PriceCacheRow[] = [{ key, priceUsd: checkedPrice(await quote(), key), source: 'quoted' }];
  return { prices: addRows(new Map(), rows), method: 'per-key', calls: 1, rows, cachedAgeMs: null };
}

/** Quotes the price of one length of a group priced by length. */
type QuoteLength = (length: number) => Promise<number>;

/**
 * A group priced by length: same parameters, many lengths. Cached lengths cost nothing; a cached,
 * confirmed rate covers new lengths inside its probed range; otherwise few lengths are quoted
 * one by one and many are probed, derived when the probes confirm linearity, else all quoted.
 */
export async function priceLengthGroup(
  groupKey: string,
  lengths: readonly number[],
  quote: QuoteLength,
  ctx: GroupContext,
): Promise<GroupOutcome> {
  const prices = new Map<string, KeyPrice>();
  const missing: number[] = [];
  let cachedAgeMs: number | null = null;
  for (const chars of [...new Set(lengths)].sort((a, b) => a - b)) {
    const cached = ctx.cache.get(lengthKey(groupKey, chars));
    if (cached === undefined) {
      missing.push(chars);
      continue;
    }
    prices.set(lengthKey(groupKey, chars), { priceUsd: cached.priceUsd, source: 'cached' });
    cachedAgeMs = Math.max(cachedAgeMs ?? 0, cached.ageMs);
  }
  if (missing.length === 0) return { prices, method: 'cached', calls: 0, rows: [], cachedAgeMs };

  const cachedFit = readCachedFit(groupKey, ctx.cache);
  if (cachedFit !== undefined && missing.every((chars) => coversLength(cachedFit, chars))) {
    const rows = deriveRows(groupKey, cachedFit, missing);
    const ageMs = Math.max(cachedAgeMs ?? 0, cachedFit.ageMs);
    return { prices: addRows(prices, rows), method: 'linear-derived', calls: 0, rows, cachedAgeMs: ageMs };
  }
  if (missing.length <= ctx.probes + 1) {
    const rows = await quoteLengths(groupKey, missing, quote);
    return { prices: addRows(prices, rows), method: 'per-key', calls: rows.length, rows, cachedAgeMs };
  }
  return { ...(await probeAndDerive(groupKey, missing, prices, quote, ctx)), cachedAgeMs };
}

async function probeAndDerive(
  groupKey: string,
  missing: readonly number[],
  prices: Map<string, KeyPrice>,
  quote: QuoteLength,
  ctx: GroupContext,
): Promise<Omit<GroupOutcome, 'cachedAgeMs'>> {
  const probed = probeLengths(missing, ctx.probes);
  const probeRows = await quoteLengths(groupKey, probed, quote);
  const fit = fitLinear(probeRows.map((row, i) => ({ chars: probed[i] ?? 0, priceUsd: row.priceUsd })));
  const rest = missing.filter((chars) => !probed.includes(chars));
  if (fit === undefined) {
    const restRows = await quoteLengths(groupKey, rest, quote);
    const rows = [...probeRows, ...restRows];
    return { prices: addRows(prices, rows), method: 'per-length-fallback', calls: rows.length, rows };
  }
  const rows = [...probeRows, ...deriveRows(groupKey, fit, rest)];
  addRows(prices, rows);
  return { prices, method: 'linear-derived', calls: probeRows.length, rows: [...rows, ...fitRows(groupKey, fit)] };
}

/** Quotes run concurrently; the caller's quote function is already bounded by the limiter. */
async function quoteLengths(groupKey: string, lengths: readonly number[], quote: QuoteLength): Promise<PriceCacheRow[]> {
  return Promise.all(
    lengths.map(async (chars): Promise<PriceCacheRow> => {
      const key = lengthKey(groupKey, chars);
      const priceUsd = checkedPrice(await quote(chars), key);
      return { key, priceUsd, source: 'quoted' };
    }),
  );
}

function deriveRows(groupKey: string, fit: LinearFit, lengths: readonly number[]): PriceCacheRow[] {
  return lengths.map((chars) => ({
    key: lengthKey(groupKey, chars),
    priceUsd: deriveLinearPrice(fit, chars),
    source: 'derived',
  }));
}

function addRows(prices: Map<string, KeyPrice>, rows: readonly PriceCacheRow[]): Map<string, KeyPrice> {
  for (const row of rows) prices.set(row.key, { priceUsd: row.priceUsd, source: row.source });
  return prices;
}

/** The fit's parts in the order `rateKeys` lists their cache keys. */
const FIT_PARTS = ['ratePerCharUsd', 'decimals', 'minChars', 'maxChars'] as const;

function fitRows(groupKey: string, fit: LinearFit): PriceCacheRow[] {
  const keys = rateKeys(groupKey);
  return FIT_PARTS.map((part, i) => ({ key: keys[i] ?? '', priceUsd: fit[part], source: 'derived' }));
}

/** The cached rate, when every part of it is cached: deriving beyond the probed range is never safe. */
function readCachedFit(groupKey: string, cache: PriceCache): (LinearFit & { ageMs: number }) | undefined {
  const entries = rateKeys(groupKey).map((key) => cache.get(key));
  if (entries.some((entry) => entry === undefined)) return undefined;
  const found = entries as { priceUsd: number; ageMs: number }[];
  const fit = Object.fromEntries(FIT_PARTS.map((part, i) => [part, found[i]?.priceUsd])) as unknown as LinearFit;
  return { ...fit, ageMs: Math.max(...found.map((entry) => entry.ageMs)) };
}
