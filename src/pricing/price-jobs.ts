import pLimit from 'p-limit';
import { kindOf, type KindPricing } from '../jobs/index.js';
import { ExitCode, MediabatchError } from '../errors.js';
import { sumMicro, usdToMicro } from '../money.js';
import { describeGroupKey, lengthKey, rateKeys } from './keys.js';
import { coversLength, deriveLinearPrice, EPSILON_USD, fitLinear, probeLengths, type LinearFit } from './linear-fit.js';
import type { MicroUsd } from '../money.js';
import type { PriceCache, PriceCacheRow, PriceGroup, PriceSource, PricingDeps } from './types.js';

const DEFAULT_PROBES = 3;
const DEFAULT_PRICE_CONCURRENCY = 4;

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

type Quote = PricingDeps['quote'];
type PricedKey = { priceKey: string; priceMicro: MicroUsd; source: PriceSource };
type KeyPrice = Pick<PriceCacheRow, 'priceUsd'> & { source: PriceSource };
type GroupContext = { cache: PriceCache; probes: number; quote: Quote };

interface GroupOutcome {
  /** By full price key. */
  prices: Map<string, KeyPrice>;
  /** How the prices were found, for the report. */
  method: 'per-key' | 'linear-derived' | 'per-length-fallback' | 'cached';
  calls: number;
  /** New rows for the cache: fresh quotes, derived prices and the fitted rate. */
  rows: PriceCacheRow[];
  /** Age of the oldest cache entry the prices rest on; null when none came from the cache. */
  cachedAgeMs: number | null;
}

/**
 * Prices every group with a number of calls that depends on the distinct price parameters, not on
 * the number of jobs: a group priced per key is one call, a group priced by length with many
 * lengths is probed and derived (see linear-fit.ts), and everything found is put in the cache so
 * the same groups priced again make no call. Rejects with the first quote failure once every group
 * has settled; the groups that succeeded are cached, so a retry of the estimate resumes cheaply.
 */
export async function priceGroups(groups: readonly PriceGroup[], deps: PricingDeps) {
  const limit = pLimit(Math.max(1, Math.floor(deps.concurrency ?? DEFAULT_PRICE_CONCURRENCY)));
  const quote: Quote = (request) => {
    deps.onCallPlanned?.();
    return limit(() => deps.quote(request));
  };
  const ctx: GroupContext = { cache: deps.cache, probes: Math.max(2, deps.probes ?? DEFAULT_PROBES), quote };
  const changes: PriceChange[] = [];
  // allSettled, not all: on a failure the other groups still finish and write the cache before
  // this returns, so nothing writes to the ledger after the caller has moved on and closed it.
  const settled = await Promise.allSettled(
    groups.map(async (group) => {
      const checked = deps.confirmCached ? await priceConfirmed(group, ctx) : { outcome: await priceGroup(group, ctx) };
      if (checked.change !== undefined) changes.push(checked.change);
      if (checked.outcome.rows.length > 0) deps.cache.put(checked.outcome.rows);
      return checked.outcome;
    }),
  );
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure !== undefined) throw failure.reason;
  const outcomes = settled.map((s) => (s as PromiseFulfilledResult<GroupOutcome>).value);
  const prices: PricedKey[] = [];
  const summaries = groups.map((group, i) => summarise(group, outcomes[i] as GroupOutcome, prices));
  return { prices, priceCalls: summaries.reduce((n, g) => n + g.calls, 0), groups: summaries, changes };
}

/**
 * A group's price keys, each with its jobs and the length it prices: a kind priced
 * per key has one (its group's key, length 0), a kind priced by length one per distinct length.
 * Every step below walks these, so both ways of pricing share one path.
 */
function keysOf(group: PriceGroup): { key: string; chars: number; jobs: number }[] {
  if (kindOf(group.type).pricing.by === 'per-key') return [{ key: group.key, chars: 0, jobs: group.jobs }];
  return group.lengths.map((l) => ({ key: lengthKey(group.key, l.chars), chars: l.chars, jobs: l.jobs }));
}

/** Asks the service the price of one of the group's keys (by its length, for a kind priced by length). */
function quoteAt(group: PriceGroup, chars: number, ctx: GroupContext): Promise<number> {
  const pricing = kindOf(group.type).pricing;
  return ctx.quote(pricing.by === 'per-key' ? pricing.request(group.sample) : pricing.request(group.sample, chars));
}

/**
 * One group's prices. Cached keys cost nothing; for a kind priced by length, a cached, confirmed
 * rate covers new lengths inside its probed range; otherwise few keys are quoted one by one and
 * many lengths are probed, derived when the probes confirm linearity, else all quoted.
 */
async function priceGroup(group: PriceGroup, ctx: GroupContext): Promise<GroupOutcome> {
  const prices = new Map<string, KeyPrice>();
  const missing: number[] = [];
  let cachedAgeMs: number | null = null;
  for (const { key, chars } of keysOf(group)) {
    const cached = ctx.cache.get(key);
    if (cached === undefined) {
      missing.push(chars);
      continue;
    }
    prices.set(key, { priceUsd: cached.priceUsd, source: 'cached' });
    cachedAgeMs = Math.max(cachedAgeMs ?? 0, cached.ageMs);
  }
  if (missing.length === 0) return { prices, method: 'cached', calls: 0, rows: [], cachedAgeMs };
  missing.sort((a, b) => a - b);
  const perLength = kindOf(group.type).pricing.by === 'per-length';
  const cachedFit = perLength ? readCachedFit(group.key, ctx.cache) : undefined;
  if (cachedFit !== undefined && missing.every((chars) => coversLength(cachedFit, chars))) {
    const rows = deriveRows(group.key, cachedFit, missing);
    const ageMs = Math.max(cachedAgeMs ?? 0, cachedFit.ageMs);
    return { prices: addRows(prices, rows), method: 'linear-derived', calls: 0, rows, cachedAgeMs: ageMs };
  }
  if (missing.length <= ctx.probes + 1) {
    const rows = await quoteLengths(group, missing, ctx);
    return { prices: addRows(prices, rows), method: 'per-key', calls: rows.length, rows, cachedAgeMs };
  }
  return { ...(await probeAndDerive(group, missing, prices, ctx)), cachedAgeMs };
}

async function probeAndDerive(
  group: PriceGroup,
  missing: readonly number[],
  prices: Map<string, KeyPrice>,
  ctx: GroupContext,
): Promise<Omit<GroupOutcome, 'cachedAgeMs'>> {
  const probed = probeLengths(missing, ctx.probes);
  const probeRows = await quoteLengths(group, probed, ctx);
  const fit = fitLinear(probeRows.map((row, i) => ({ chars: probed[i] ?? 0, priceUsd: row.priceUsd })));
  const rest = missing.filter((chars) => !probed.includes(chars));
  if (fit === undefined) {
    const restRows = await quoteLengths(group, rest, ctx);
    const rows = [...probeRows, ...restRows];
    return { prices: addRows(prices, rows), method: 'per-length-fallback', calls: rows.length, rows };
  }
  const rows = [...probeRows, ...deriveRows(group.key, fit, rest)];
  addRows(prices, rows);
  return { prices, method: 'linear-derived', calls: probeRows.length, rows: [...rows, ...fitRows(group.key, fit)] };
}

/**
 * Quotes run concurrently; the quote function is already bounded by the limiter. A price of 0
 * would let any number of jobs through any budget: the service never charges nothing.
 */
function quoteLengths(group: PriceGroup, lengths: readonly number[], ctx: GroupContext): Promise<PriceCacheRow[]> {
  const perKey = kindOf(group.type).pricing.by === 'per-key';
  return Promise.all(
    lengths.map(async (chars): Promise<PriceCacheRow> => {
      const key = perKey ? group.key : lengthKey(group.key, chars);
      const priceUsd = await quoteAt(group, chars, ctx);
      if (!(priceUsd > 0) || priceUsd > MAX_JOB_PRICE_USD) throw new InvalidPriceError(key, priceUsd);
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

/**
 * A cached price may be days behind the service's. Before money is spent, one fresh call per
 * group checks the group's costliest price that came from the cache, where a change shows the
 * most (lengths derived from a cached rate rest on the cache too; they serve when none was
 * cached itself). When it moved, the group's cache (its fitted rate included) is dropped and the
 * group is priced again from the service.
 */
/** A group whose cached price no longer matched the service's: the key checked, its price then and now. */
type PriceChange = { groupKey: string; model: string; key: string; cachedUsd: number; currentUsd: number };
type Checked = { outcome: GroupOutcome; change?: PriceChange };

async function priceConfirmed(group: PriceGroup, ctx: GroupContext): Promise<Checked> {
  const outcome = await priceGroup(group, ctx);
  if (outcome.cachedAgeMs === null) return { outcome };
  const keys = keysOf(group);
  const fromCache = keys.filter((entry) => outcome.prices.get(entry.key)?.source === 'cached');
  const target = (fromCache.length > 0 ? fromCache : keys).reduce((a, b) => (b.chars > a.chars ? b : a));
  const cachedUsd = priceOf(outcome, target.key).priceUsd;
  const currentUsd = await quoteAt(group, target.chars, ctx);
  if (Math.abs(currentUsd - cachedUsd) <= EPSILON_USD) {
    // Still the service's price: the quote refreshes the age of the entry it checked.
    const confirmed = { key: target.key, priceUsd: currentUsd, source: 'quoted' as const };
    return { outcome: { ...outcome, calls: outcome.calls + 1, rows: [...outcome.rows, confirmed] } };
  }
  const perLength = kindOf(group.type).pricing.by === 'per-length';
  ctx.cache.forget([...keys.map((entry) => entry.key), ...(perLength ? rateKeys(group.key) : [])]);
  const fresh = await priceGroup(group, { ...ctx, cache: { ...ctx.cache, get: () => undefined } });
  const model = String(group.sample.params['model']);
  return {
    outcome: { ...fresh, calls: outcome.calls + 1 + fresh.calls },
    change: { groupKey: group.key, model, key: target.key, cachedUsd, currentUsd },
  };
}

/** Every key of a group is priced by priceGroup; a gap is a bug in this module, not a user error. */
function priceOf(outcome: GroupOutcome, key: string) {
  const price = outcome.prices.get(key);
  if (price === undefined) throw new Error(`bug in mediabatch: no price for ${key} in its own group`);
  return price;
}

/**
 * Gives each price key of the group its price, in whole micro-dollars rounded up from the
 * service's quote (what may be charged), and sums the group up for the report.
 */
export function summarise(group: PriceGroup, outcome: GroupOutcome, prices: PricedKey[]) {
  const jobsBySource: Record<PriceSource, number> = { quoted: 0, derived: 0, cached: 0 };
  const totals: number[] = [];
  const pricing = kindOf(group.type).pricing;
  const perLength = pricing.by === 'per-length';
  for (const { key, jobs } of keysOf(group)) {
    const found = priceOf(outcome, key);
    const priceMicro = usdToMicro(found.priceUsd, 'up');
    prices.push({ priceKey: key, priceMicro, source: found.source });
    jobsBySource[found.source] += jobs;
    totals.push(priceMicro * jobs);
  }
  const sample = group.sample.params;
  return {
    key: group.key,
    type: group.type,
    model: String(group.sample.params['model']),
    // The priced fields: every job of the group has these values, they are what the group is.
    params: Object.fromEntries(pricedFields(pricing, sample).map((field) => [field, sample[field] ?? null])),
    jobs: group.jobs,
    // Kinds priced by length: all the texts' characters and their distinct lengths.
    characters: perLength ? group.lengths.reduce((sum, l) => sum + l.chars * l.jobs, 0) : null,
    distinctLengths: perLength ? group.lengths.length : null,
    method: outcome.method,
    calls: outcome.calls,
    totalMicro: sumMicro(totals),
    jobsBySource,
    /** Age of the oldest cached price (or rate) this group's prices rest on; null: none cached. */
    cachedAgeMs: outcome.cachedAgeMs,
  };
}

export type { GroupSummary, PriceGroup, PricingResult } from './types.js';

/** The key fields, and the later ones the group sets (left out, they were never part of its key). */
function pricedFields(pricing: KindPricing, params: Readonly<Record<string, unknown>>): string[] {
  const later = (pricing.laterKeyFields ?? []).filter((field) => params[field] !== undefined);
  return [...pricing.keyFields, ...later];
}
