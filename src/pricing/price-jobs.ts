import pLimit from 'p-limit';
import { kindOf } from '../jobs/index.js';
import { lengthKey, rateKeys } from './keys.js';
import { sumMicro, usdToMicro } from '../money.js';
import { EPSILON_USD } from './quotes.js';
import { priceKeyGroup, priceLengthGroup, type GroupContext, type GroupOutcome } from './price-group.js';
import type { PriceCache, PriceChange, PricedKey, PriceGroup, PriceSource, PricingDeps } from './types.js';

const DEFAULT_PROBES = 3;
const DEFAULT_PRICE_CONCURRENCY = 4;

type Quote = PricingDeps['quote'];

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
  const ctx: GroupContext = { cache: deps.cache, probes: Math.max(2, deps.probes ?? DEFAULT_PROBES) };
  const changes: PriceChange[] = [];
  // allSettled, not all: on a failure the other groups still finish and write the cache before
  // this returns, so nothing writes to the ledger after the caller has moved on and closed it.
  const settled = await Promise.allSettled(
    groups.map(async (group) => {
      const checked = deps.confirmCached
        ? await priceConfirmed(group, ctx, quote, deps.cache)
        : { outcome: await priceGroup(group, ctx, quote) };
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
 * A cached price may be days behind the service's. Before money is spent, one fresh call per
 * group checks the price that the group's cached prices rest on; when it moved, the group's
 * cache (its fitted rate included) is dropped and the group is priced again from the service.
 */
async function priceConfirmed(
  group: PriceGroup,
  ctx: GroupContext,
  quote: Quote,
  cache: PriceCache,
): Promise<{ outcome: GroupOutcome; change?: PriceChange }> {
  const outcome = await priceGroup(group, ctx, quote);
  if (outcome.cachedAgeMs === null) return { outcome };
  const target = confirmationTarget(group, outcome);
  const currentUsd = await quote(target.request);
  if (Math.abs(currentUsd - target.cachedUsd) <= EPSILON_USD) {
    // Still the service's price: the quote refreshes the age of the entry it checked.
    const confirmed = { key: target.key, priceUsd: currentUsd, source: 'quoted' as const };
    return { outcome: { ...outcome, calls: outcome.calls + 1, rows: [...outcome.rows, confirmed] } };
  }
  const keys = keysOf(group).map((entry) => entry.key);
  cache.forget(kindOf(group.type).pricing.by === 'per-length' ? [...keys, ...rateKeys(group.key)] : keys);
  const fresh = await priceGroup(group, { ...ctx, cache: { ...cache, get: () => undefined } }, quote);
  const model = String(group.sample.params['model']);
  return {
    outcome: { ...fresh, calls: outcome.calls + 1 + fresh.calls },
    change: { groupKey: group.key, model, key: target.key, cachedUsd: target.cachedUsd, currentUsd },
  };
}

type Target = { key: string; cachedUsd: number; request: Parameters<Quote>[0] };

/** The group's costliest price that came from the cache: where a change shows the most. */
function confirmationTarget(group: PriceGroup, outcome: GroupOutcome): Target {
  const pricing = kindOf(group.type).pricing;
  if (pricing.by === 'per-key') {
    return { key: group.key, cachedUsd: priceOf(outcome, group.key).priceUsd, request: pricing.request(group.sample) };
  }
  const fromCache = (chars: number): boolean => outcome.prices.get(lengthKey(group.key, chars))?.source === 'cached';
  // Lengths derived from a cached rate rest on the cache too; they serve when none was cached itself.
  const all = group.lengths.map((l) => l.chars);
  const candidates = all.some(fromCache) ? all.filter(fromCache) : all;
  const longest = Math.max(...candidates);
  const key = lengthKey(group.key, longest);
  return { key, cachedUsd: priceOf(outcome, key).priceUsd, request: pricing.request(group.sample, longest) };
}

/** Every key of a group is priced by priceGroup; a gap is a bug in this module, not a user error. */
function priceOf(outcome: GroupOutcome, key: string) {
  const price = outcome.prices.get(key);
  if (price === undefined) throw new Error(`bug in mediabatch: no price for ${key} in its own group`);
  return price;
}

/** Every price key of a group and its jobs: the group's own, or one per length. */
function keysOf(group: PriceGroup): { key: string; jobs: number }[] {
  if (kindOf(group.type).pricing.by === 'per-key') return [{ key: group.key, jobs: group.jobs }];
  return group.lengths.map((l) => ({ key: lengthKey(group.key, l.chars), jobs: l.jobs }));
}

function priceGroup(group: PriceGroup, ctx: GroupContext, quote: Quote): Promise<GroupOutcome> {
  const pricing = kindOf(group.type).pricing;
  if (pricing.by === 'per-key') return priceKeyGroup(group.key, () => quote(pricing.request(group.sample)), ctx);
  return priceLengthGroup(
    group.key,
    group.lengths.map((l) => l.chars),
    (length) => quote(pricing.request(group.sample, length)),
    ctx,
  );
}

/** Gives each price key of the group its price and sums the group up for the report. */
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
  return {
    key: group.key,
    type: group.type,
    model: String(group.sample.params['model']),
    // The priced fields: every job of the group has these values, they are what the group is.
    params: Object.fromEntries(pricing.keyFields.map((field) => [field, group.sample.params[field] ?? null])),
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

export type { GroupMethod, GroupSummary, PriceCache, PriceCacheRow, PriceChange, PricedKey, PriceGroup, PriceSource, PricingDeps, PricingResult } from './types.js';
