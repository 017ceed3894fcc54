import type { Img2VideoJob, ResolvedJob, Txt2AudioJob } from '../manifest/types.js';
import { groupKeyOf, img2videoPriceQuery, priceKeyOf } from './keys.js';
import pLimit from 'p-limit';
import { sumUsd } from './money.js';
import { priceSpeechGroup, priceVideoGroup, type GroupContext, type GroupOutcome } from './price-group.js';
import type { GroupSummary, JobPrice, PriceSource, PricingDeps, PricingResult } from './types.js';

export const DEFAULT_PROBES = 3;
export const DEFAULT_PRICE_CONCURRENCY = 4;

type PriceGroup =
  | { type: 'txt2audio'; key: string; jobs: Txt2AudioJob[] }
  | { type: 'img2video'; key: string; jobs: Img2VideoJob[] };

/**
 * Prices every job with a number of calls that depends on the distinct price parameters, not on
 * the number of jobs: jobs sharing a key share one call, txt2audio groups with many lengths are
 * probed and derived (see linear-fit.ts), and everything found is put in the cache so the same
 * jobs priced again make no call. Rejects with the first quote failure once every group has
 * settled; the groups that succeeded are cached, so a retry of the estimate resumes cheaply.
 */
export async function priceJobs(jobs: readonly ResolvedJob[], deps: PricingDeps): Promise<PricingResult> {
  const limit = pLimit(Math.max(1, Math.floor(deps.concurrency ?? DEFAULT_PRICE_CONCURRENCY)));
  const ctx: GroupContext = {
    cache: deps.cache,
    probes: Math.max(2, deps.probes ?? DEFAULT_PROBES),
    quoteTxt2Audio: (query) => limit(() => deps.quoteTxt2Audio(query)),
    quoteImg2Video: (query) => limit(() => deps.quoteImg2Video(query)),
  };
  const groups = groupJobs(jobs);
  // allSettled, not all: on a failure the other groups still finish and write the cache before
  // this returns, so nothing writes to the ledger after the caller has moved on and closed it.
  const settled = await Promise.allSettled(
    groups.map(async (group) => {
      const outcome = await priceGroup(group, ctx);
      if (outcome.rows.length > 0) deps.cache.put(outcome.rows);
      return outcome;
    }),
  );
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure !== undefined) throw failure.reason;
  const outcomes = settled.map((s) => (s as PromiseFulfilledResult<GroupOutcome>).value);
  const prices = new Map<string, JobPrice>();
  const summaries = groups.map((group, i) => summarise(group, outcomes[i] as GroupOutcome, prices));
  return { prices, priceCalls: summaries.reduce((n, g) => n + g.calls, 0), groups: summaries };
}

function groupJobs(jobs: readonly ResolvedJob[]): PriceGroup[] {
  const byKey = new Map<string, PriceGroup>();
  for (const job of jobs) {
    const key = groupKeyOf(job);
    const group = byKey.get(key);
    // The type is part of the key, so a group only ever receives jobs of its own type.
    if (group !== undefined) (group.jobs as ResolvedJob[]).push(job);
    else byKey.set(key, job.type === 'txt2audio' ? { type: job.type, key, jobs: [job] } : { type: job.type, key, jobs: [job] });
  }
  return [...byKey.values()];
}

function priceGroup(group: PriceGroup, ctx: GroupContext): Promise<GroupOutcome> {
  if (group.type === 'img2video') {
    const first = group.jobs[0] as Img2VideoJob;
    return priceVideoGroup(img2videoPriceQuery(first.params), ctx);
  }
  const first = group.jobs[0] as Txt2AudioJob;
  return priceSpeechGroup(group.key, first.params, group.jobs.map((job) => job.textChars), ctx);
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
    prices.set(job.id, { priceUsd: found.priceUsd, source: found.source, key });
    jobsBySource[found.source] += 1;
    groupPrices.push(found.priceUsd);
  }
  const first = group.jobs[0] as ResolvedJob;
  return {
    key: group.key,
    type: group.type,
    model: first.params.model,
    jobs: group.jobs.length,
    distinctLengths: group.type === 'txt2audio' ? new Set(group.jobs.map((j) => j.textChars)).size : null,
    method: outcome.method,
    calls: outcome.calls,
    totalUsd: sumUsd(groupPrices),
    jobsBySource,
  };
}

export type { GroupMethod, GroupSummary, JobPrice, PriceCache, PriceCacheRow, PriceSource, PricingDeps, PricingResult } from './types.js';
