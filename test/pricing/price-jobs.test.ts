import { describe, expect, it } from 'vitest';
import type { ServiceRequest } from '../../src/api/types.js';
import { usdToMicro } from '../../src/money.js';
import type { ResolvedJob } from '../../src/jobs/index.js';
import { groupKeyOf, priceKeyOf, rateKeys } from '../../src/pricing/keys.js';
import { KOKORO, laws, memoryCache, priceJobs, quoteWith, speechJob, speechQuoter, videoJob, videoQuoter, type SpeechLaw, type SpeechParams } from './jobs.js';

const VOICES = ['af_sky', 'af_bella', 'am_adam'];

/** 10,000 jobs, every one a different length, spread over three voices (three price groups). */
function manyJobs(count = 10_000): ResolvedJob[] {
  return Array.from({ length: count }, (_, i) => speechJob(`j${i}`, 20 + i * 3, { voice: VOICES[i % 3] ?? 'af_sky' }, i));
}

async function price(jobs: ResolvedJob[], law: SpeechLaw, cache = memoryCache()) {
  const speech = speechQuoter(law);
  const video = videoQuoter();
  const result = await priceJobs(jobs, { quote: quoteWith(speech, video), cache });
  return { result, speech, cache };
}

function truePrice(job: ResolvedJob, law: SpeechLaw): number {
  const chars = job.textChars ?? 0;
  return law(chars, { ...(job.params as unknown as SpeechParams), count_text: chars });
}

describe('priceJobs for txt2audio', () => {
  it('prices 10,000 lengths under a linear law with a few probes per group', async () => {
    const jobs = manyJobs();
    const { result, speech } = await price(jobs, laws.linear);
    expect(result.priceCalls).toBe(9);
    expect(speech.state.calls).toBe(9);
    expect(result.groups.map((g) => [g.method, g.calls, g.jobs])).toEqual([
      ['linear-derived', 3, 3334],
      ['linear-derived', 3, 3333],
      ['linear-derived', 3, 3333],
    ]);
    // Every derived price is the service's own, counted (as every price is) in whole micro-dollars, rounded up.
    for (const job of jobs) {
      const priced = result.prices.get(job.id);
      expect(priced, job.id).toBeDefined();
      expect(priced?.priceMicro, job.id).toBe(usdToMicro(truePrice(job, laws.linear), 'up'));
    }
    const sources = [...result.prices.values()].map((p) => p.source);
    expect(sources.filter((s) => s === 'quoted')).toHaveLength(9);
    expect(sources.filter((s) => s === 'derived')).toHaveLength(9991);
  });

  it('probes the smallest and largest length actually present, and sends only count_text', async () => {
    const jobs = [100, 5, 70, 40, 999, 300].map((n, i) => speechJob(`j${i}`, n, {}, i));
    const { speech } = await price(jobs, laws.linear);
    expect([...speech.state.counts].sort((a, b) => a - b)).toEqual([5, 100, 999]);
  });

  it.each([
    ['a minimum charge', laws.minimumCharge],
    ['a fixed fee', laws.fixedFee],
    ['tiers', laws.tiered],
  ])('falls back to one exact quote per length under %s', async (_, law) => {
    const jobs = manyJobs(3000);
    const { result, speech } = await price(jobs, law);
    expect(result.groups.every((g) => g.method === 'per-length-fallback')).toBe(true);
    expect(speech.state.calls).toBe(3000);
    for (const job of jobs) {
      expect(result.prices.get(job.id)).toMatchObject({ priceMicro: usdToMicro(truePrice(job, law), 'up'), source: 'quoted' });
    }
  });

  it('derives prices under a rounded-up law never below the quote, and over it by at most one unit', async () => {
    const jobs = manyJobs(3000);
    const { result } = await price(jobs, laws.roundedUp4);
    expect(result.groups.every((g) => g.method === 'linear-derived')).toBe(true);
    for (const job of jobs) {
      const derived = result.prices.get(job.id)?.priceMicro ?? NaN;
      const quoted = usdToMicro(truePrice(job, laws.roundedUp4), 'up');
      expect(derived).toBeGreaterThanOrEqual(quoted);
      // One unit of the quotes ($0.0001) at most, and on that grid.
      expect(derived - quoted).toBeLessThanOrEqual(100);
      expect(derived % 100).toBe(0);
    }
  });

  it('quotes each length when a group has few of them, and shares one call per length', async () => {
    const jobs = [10, 20, 20, 30, 30, 30].map((n, i) => speechJob(`j${i}`, n, {}, i));
    const { result, speech } = await price(jobs, laws.minimumCharge);
    expect(speech.state.calls).toBe(3);
    expect(result.groups).toMatchObject([{ method: 'per-key', calls: 3, jobs: 6, distinctLengths: 3 }]);
  });

  it('prices the same jobs again from the cache with no call', async () => {
    const jobs = manyJobs(2000);
    const first = await price(jobs, laws.linear);
    const second = await price(jobs, laws.linear, first.cache);
    expect(second.speech.state.calls).toBe(0);
    expect(second.result.priceCalls).toBe(0);
    expect(second.result.groups.every((g) => g.method === 'cached')).toBe(true);
    for (const job of jobs) {
      const again = second.result.prices.get(job.id);
      expect(again?.source).toBe('cached');
      expect(again?.priceMicro).toBe(first.result.prices.get(job.id)?.priceMicro);
    }
  });

  it('derives new lengths inside a known-linear group from the cached rate, without a call', async () => {
    const { cache } = await price(manyJobs(300), laws.linear);
    expect(cache.rows.get(rateKeys(groupKeyOf(speechJob('k', 1)))[0] ?? '')?.source).toBe('derived');
    const inside = [speechJob('new-a', 100, {}, 0), speechJob('new-b', 200, {}, 1)];
    const again = await price(inside, laws.linear, cache);
    expect(again.speech.state.calls).toBe(0);
    expect(again.result.prices.get('new-a')).toMatchObject({ source: 'derived', priceMicro: 77 });
    expect(again.result.groups).toMatchObject([{ method: 'linear-derived', calls: 0 }]);
  });

  it('does not reuse a cached rate outside the range its probes covered', async () => {
    const { cache } = await price(manyJobs(300), laws.linear);
    const outside = [speechJob('tiny', 1, {}, 0)];
    const again = await price(outside, laws.linear, cache);
    expect(again.speech.state.calls).toBe(1);
    expect(again.result.prices.get('tiny')).toMatchObject({ source: 'quoted' });
  });

  it('keeps at most `concurrency` quotes in flight', async () => {
    const speech = speechQuoter(laws.fixedFee);
    const video = videoQuoter();
    const jobs = manyJobs(200);
    await priceJobs(jobs, { quote: quoteWith(speech, video), cache: memoryCache(), concurrency: 3 });
    expect(speech.state.maxInFlight).toBe(3);
  });
});

describe('priceJobs failures', () => {
  it('rejects with the quote error after caching the groups that succeeded', async () => {
    const cache = memoryCache();
    const jobs = [speechJob('ok', 10, {}, 0), speechJob('bad', 10, { voice: 'bm_george', lang: 'en-gb' }, 1)];
    const video = videoQuoter();
    const speech = {
      quote: async (request: ServiceRequest) => {
        if ('json' in request && request.json['voice'] === 'bm_george') throw new Error('price endpoint down');
        return 0.001;
      },
    };
    await expect(priceJobs(jobs, { quote: quoteWith(speech, video), cache })).rejects.toThrow('price endpoint down');
    expect(cache.rows.get(priceKeyOf(speechJob('k', 10)))?.priceUsd).toBe(0.001);
  });

  it('refuses a price that cannot be one', async () => {
    const video = videoQuoter();
    const jobs = [speechJob('a', 10, {}, 0)];
    await expect(
      priceJobs(jobs, { quote: quoteWith({ quote: async () => Number.NaN }, video), cache: memoryCache() }),
    ).rejects.toMatchObject({ code: 'E_PRICE_INVALID' });
  });

  it('sends only the priced fields, never the text', async () => {
    const seen: object[] = [];
    const video = videoQuoter();
    const speech = {
      quote: async (request: ServiceRequest) => {
        seen.push(request);
        return 0.1;
      },
    };
    await priceJobs([speechJob('a', 10, {}, 0)], { quote: quoteWith(speech, video), cache: memoryCache() });
    expect(seen).toEqual([{ endpoint: 'txt2audio/price-calculation', json: { ...KOKORO, count_text: 10 } }]);
  });
});

describe('priceJobs for img2video', () => {
  it('makes one call per distinct key, whatever the prompts and images', async () => {
    const jobs = [
      videoJob('a', {}, 0),
      videoJob('b', {}, 1),
      videoJob('c', { frames: 60 }, 2),
      videoJob('d', { frames: 60 }, 3),
      videoJob('e', { width: 512, height: 512 }, 4),
    ];
    const speech = speechQuoter(laws.linear);
    const video = videoQuoter();
    const cache = memoryCache();
    const result = await priceJobs(jobs, { quote: quoteWith(speech, video), cache });
    expect(video.state.calls).toBe(3);
    expect(result.groups.map((g) => [g.jobs, g.method, g.distinctLengths])).toEqual([
      [2, 'per-key', null],
      [2, 'per-key', null],
      [1, 'per-key', null],
    ]);
    expect(video.state.queries[0]).toEqual({ model: 'Ltxv_13B_0_9_8_Distilled_FP8', width: 768, height: 432, steps: 1, frames: 120, fps: 30 });
    expect(result.prices.get('b')?.key).toBe('v1|img2video|Ltxv_13B_0_9_8_Distilled_FP8|768|432|1|120|30');
    expect(cache.rows.has(priceKeyOf(jobs[0]!))).toBe(true);
  });
});

describe('price keys', () => {
  it('are versioned and name every price parameter', () => {
    expect(priceKeyOf(speechJob('k', 42))).toBe('v1|txt2audio|Kokoro|af_sky|en-us|1|mp3|24000|chars=42');
    expect(groupKeyOf(speechJob('k', 1, { voice: 'a|b' }))).toBe('v1|txt2audio|Kokoro|a%7Cb|en-us|1|mp3|24000');
  });

  it('tell structured parameters apart by their content (two LoRA sets are two prices)', () => {
    const image = (loras: unknown) => ({ type: 'txt2img' as const, params: { model: 'Flux1schnell', width: 512, height: 512, guidance: 0, steps: 4, loras } });
    const a = groupKeyOf(image([{ name: 'anime', weight: 0.8 }]));
    expect(a).not.toBe(groupKeyOf(image([{ name: 'sketch', weight: 0.8 }])));
    expect(a).not.toBe(groupKeyOf(image([{ name: 'anime', weight: 0.5 }])));
    expect(a).toBe(groupKeyOf(image([{ weight: 0.8, name: 'anime' }])));
    expect(groupKeyOf(image(undefined))).toBe('v1|txt2img|Flux1schnell|512|512|0|4|undefined');
  });
});

describe('priceJobs with confirmCached (before a run spends)', () => {
  const tenTimes: SpeechLaw = (n, q) => laws.linear(n, q) * 10;

  async function priceWith(jobs: ResolvedJob[], law: SpeechLaw, cache: ReturnType<typeof memoryCache>) {
    const speech = speechQuoter(law);
    const video = videoQuoter();
    const result = await priceJobs(jobs, { quote: quoteWith(speech, video), cache, confirmCached: true });
    return { result, speech };
  }

  it('checks each cached group with one call and keeps its prices when the service agrees', async () => {
    const jobs = manyJobs(300);
    const cache = memoryCache();
    await price(jobs, laws.linear, cache);
    const { result, speech } = await priceWith(jobs, laws.linear, cache);
    expect(speech.state.calls).toBe(3);
    expect(result.changes).toEqual([]);
    expect(result.groups.every((g) => g.cachedAgeMs === 0)).toBe(true);
  });

  it('prices a group again, without its cache or its cached rate, when the service price moved', async () => {
    const jobs = manyJobs(300);
    const cache = memoryCache();
    await price(jobs, laws.linear, cache);
    // Lengths no job had before: with the cached rate they would be derived at the old price.
    const more = [...jobs, speechJob('new-short', 21), speechJob('new-long', 900)];
    const { result } = await priceWith(more, tenTimes, cache);
    expect(result.changes.map((c) => c.model)).toEqual(['Kokoro', 'Kokoro', 'Kokoro']);
    for (const job of more) {
      expect(result.prices.get(job.id)?.priceMicro, job.id).toBe(usdToMicro(truePrice(job, tenTimes), 'up'));
    }
    // The next run finds today's prices in the cache: one confirming call per group, no change.
    const again = await priceWith(more, tenTimes, cache);
    expect(again.result.changes).toEqual([]);
    expect(again.speech.state.calls).toBe(3);
  });
});
