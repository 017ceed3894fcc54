import pLimit from 'p-limit';
import { kindOf, type JobKind, type ResolvedJob } from '../jobs/index.js';
import { groupKeyOf, priceKeyOf, rateKeys } from './keys.js';
import { sumMicro, usdToMicro } from '../money.js';
import { EPSILON_USD } from './quotes.js';
import { priceKeyGroup, priceLengthGroup, type GroupContext, type GroupOutcome } from './price-group.js';
import type { GroupSummary, JobPrice, PriceCache, PriceChange, PriceSource, PricingDeps, PricingResult } from './types.js';

export const DEFAULT_PROBES = 3;
export const DEFAULT_PRICE_CONCURRENCY = 4;

/** Jobs of one kind sharing every priced field (all but the length, for kinds priced by length). */
interface PriceGroup {
  key: string;
  kind: JobKind;
  jobs: ResolvedJob[];
}

type Quote = PricingDeps['quote'];

/**
 * Prices every job with a number of calls that depends on the distinct price parameters, not on
 * the number of jobs: jobs sharing a key share one call, groups priced by length with many
 * lengths are probed and derived (see linear-fit.ts), and everything found is put in the cache so
 * the same jobs priced again make no call. Rejects with the first quote failure once every group
 * has settled; the groups that succeeded are cached, so a retry of the estimate resumes cheaply.
 */
export async function priceJobs(jobs: readonly ResolvedJob[], deps: PricingDeps): Promise<PricingResult> {
  const limit = pLimit(Math.max(1, Math.floor(deps.concurrency ?? DEFAULT_PRICE_CONCURRENCY)));
  const quote: Quote = (request) => limit(() => deps.quote(request));
  const ctx: GroupContext = { cache: deps.cache, probes: Math.max(2, deps.probes ?? DEFAULT_PROBES) };
  const groups = groupJobs(jobs);
  const changes: PriceChange[] = [];
  // allSettled, not all: on a failure the other groups still finish and write the cache before
  // this returns, so nothing writes to the ledger after the caller has moved on and closed it.
  const settled = await Promise.allSettled(
    groups.map(async (group) => {
      const checked =
        deps.confirmCached === true ? await priceConfirmed(group, ctx, quote, deps.cache) : { outcome: await priceGroup(group, ctx, quote) };
      if (checked.change !== undefined) changes.push(checked.change);
      if (checked.outcome.rows.length > 0) deps.cache.put(checked.outcome.rows);
      return checked.outcome;
    }),
  );
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure !== undefined) throw failure.reason;
  const outcomes = settled.map((s) => (s as PromiseFulfilledResult<GroupOutcome>).value);
  const prices = new Map<string, JobPrice>();
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
  const keys = [...new Set(group.jobs.map(priceKeyOf))];
  cache.forget(group.kind.pricing.by === 'per-length' ? [...keys, ...rateKeys(group.key)] : keys);
  const fresh = await priceGroup(group, { ...ctx, cache: { ...cache, get: () => undefined } }, quote);
  const model = String((group.jobs[0] as ResolvedJob).params['model']);
  return {
    outcome: { ...fresh, calls: outcome.calls + 1 + fresh.calls },
    change: { groupKey: group.key, model, key: target.key, cachedUsd: target.cachedUsd, currentUsd },
  };
}

/** The group's costliest price that came from the cache: where a change shows the most. */
function confirmationTarget(group: PriceGroup, outcome: GroupOutcome): { key: string; cachedUsd: number; request: Parameters<Quote>[0] } {
  const pricing = group.kind.pricing;
  const first = group.jobs[0] as ResolvedJob;
  if (pricing.by === 'per-key') return { key: group.key, cachedUsd: cachedPrice(outcome, group.key), request: pricing.request(first) };
  const fromCache = (job: ResolvedJob): boolean => outcome.prices.get(priceKeyOf(job))?.source === 'cached';
  // Lengths derived from a cached rate rest on the cache too; they serve when none was cached itself.
  const candidates = group.jobs.some(fromCache) ? group.jobs.filter(fromCache) : group.jobs;
  const longest = candidates.reduce((a, b) => (pricing.lengthOf(b) > pricing.lengthOf(a) ? b : a));
  const key = priceKeyOf(longest);
  return { key, cachedUsd: cachedPrice(outcome, key), request: pricing.request(longest, pricing.lengthOf(longest)) };
}

function cachedPrice(outcome: GroupOutcome, key: string): number {
  const price = outcome.prices.get(key);
  if (price === undefined) throw new Error(`bug in mediabatch: no price for ${key} in its own group`);
  return price.priceUsd;
}

function groupJobs(jobs: readonly ResolvedJob[]): PriceGroup[] {
  const byKey = new Map<string, PriceGroup>();
  for (const job of jobs) {
    const key = groupKeyOf(job);
    const group = byKey.get(key);
    // The type is part of the key, so a group only ever holds jobs of one kind.
    if (group !== undefined) group.jobs.push(job);
    else byKey.set(key, { key, kind: kindOf(job.type), jobs: [job] });
  }
  return [...byKey.values()];
}

function priceGroup(group: PriceGroup, ctx: GroupContext, quote: Quote): Promise<GroupOutcome> {
  const pricing = group.kind.pricing;
  const first = group.jobs[0] as ResolvedJob;
  if (pricing.by === 'per-key') return priceKeyGroup(group.key, () => quote(pricing.request(first)), ctx);
  return priceLengthGroup(group.key, group.jobs.map(pricing.lengthOf), (length) => quote(pricing.request(first, length)), ctx);
}

/** Gives each job of the group its price and sums the group up for the report. */
function summarise(group: PriceGroup, outcome: GroupOutcome, prices: Map<string, JobPrice>): GroupSummary {
  const jobsBySource: Record<PriceSource, number> = { quoted: 0, derived: 0, cached: 0 };
  const groupPrices: number[] = [];
  for (const job of group.jobs) {
    const key = priceKeyOf(job);
    const found = outcome.prices.get(key);
    // Every key of the group is priced above; a gap is a bug in this module, not a user error.
    if (found === undefined) throw new Error(`pricing left job ${job.id} without a price (key ${key})`);
    const priceMicro = usdToMicro(found.priceUsd, 'up');
    prices.set(job.id, { priceMicro, source: found.source, key });
    jobsBySource[found.source] += 1;
    groupPrices.push(priceMicro);
  }
  const pricing = group.kind.pricing;
  const first = group.jobs[0] as ResolvedJob;
  const lengths = pricing.by === 'per-length' ? group.jobs.map(pricing.lengthOf) : null;
  return {
    key: group.key,
    type: group.kind.type,
    model: String(first.params['model']),
    // Every job of the group has these values: they are what the group is.
    params: Object.fromEntries(pricing.keyFields.map((field) => [field, first.params[field] ?? null])),
    jobs: group.jobs.length,
    characters: lengths === null ? null : lengths.reduce((sum, n) => sum + n, 0),
    distinctLengths: lengths === null ? null : new Set(lengths).size,
    method: outcome.method,
    calls: outcome.calls,
    totalMicro: sumMicro(groupPrices),
    jobsBySource,
    cachedAgeMs: outcome.cachedAgeMs,
  };
}

export type { GroupMethod, GroupSummary, JobPrice, PriceCache, PriceCacheRow, PriceChange, PriceSource, PricingDeps, PricingResult } from './types.js';
