import type { ServiceRequest } from '../../src/api/types.js';
import { planLimits } from '../../src/jobs/plans.js';
import { budgetFit } from '../../src/money.js';
import type { CostLine, CostReportInput } from '../../src/pricing/report.js';
import { kindOf, type ResolvedJob } from '../../src/jobs/index.js';
import { groupKeyOf, priceKeyOf } from '../../src/pricing/keys.js';
import { priceGroups } from '../../src/pricing/price-jobs.js';
import type { PriceCache, PriceCacheRow, PriceGroup, PricingDeps } from '../../src/pricing/types.js';

/** What a speech job's price depends on besides its length. */
export interface SpeechParams {
  model: string;
  voice: string;
  lang: string;
  speed: number;
  format: string;
  sample_rate: number;
}
export type SpeechPriceQuery = SpeechParams & { count_text: number };

/** What a video job's price depends on. */
export interface VideoPriceQuery {
  model: string;
  width: number;
  height: number;
  steps: number;
  frames: number;
  fps: number;
}

export const KOKORO: SpeechParams = {
  model: 'Kokoro',
  voice: 'af_sky',
  lang: 'en-us',
  speed: 1,
  format: 'mp3',
  sample_rate: 24000,
};

export function speechJob(id: string, textChars: number, params: Partial<SpeechParams> = {}, index = 0): ResolvedJob {
  return {
    id,
    idDerived: false,
    index,
    contentHash: `hash-${id}`,
    position: { line: index + 1, col: 5 },
    fieldPositions: {},
    type: 'txt2audio',
    params: { ...KOKORO, ...params },
    text: 'x'.repeat(Math.min(textChars, 10)),
    textChars,
    media: {},
  };
}

export function videoJob(id: string, query: Partial<VideoPriceQuery> = {}, index = 0): ResolvedJob {
  return {
    id,
    idDerived: false,
    index,
    contentHash: `hash-${id}`,
    position: { line: index + 1, col: 5 },
    fieldPositions: {},
    type: 'img2video',
    params: { ...videoParams(), ...query, prompt: `prompt of ${id}`, guidance: 0, seed: 42 },
    media: { first_frame_image: { path: '/tmp/a.png', written: 'a.png', contentType: 'image/png', bytes: 10, sha256: 'ab' } },
  };
}

function videoParams(): VideoPriceQuery {
  return { model: 'Ltxv_13B_0_9_8_Distilled_FP8', width: 768, height: 432, steps: 1, frames: 120, fps: 30 };
}

/** An in-memory price cache with the ledger's contract: a plain map, rows overwrite by key. */
export function memoryCache(): PriceCache & { rows: Map<string, PriceCacheRow> } {
  const rows = new Map<string, PriceCacheRow>();
  return {
    rows,
    get: (key) => {
      const row = rows.get(key);
      return row === undefined ? undefined : { ...row, ageMs: 0 };
    },
    put: (added) => {
      for (const row of added) rows.set(row.key, row);
    },
    forget: (keys) => {
      for (const key of keys) rows.delete(key);
    },
  };
}

/** A price law for count_text, as a service would apply it. */
export type SpeechLaw = (chars: number, query: SpeechPriceQuery) => number;

export const RATE_PER_CHAR_USD = 0.00000077;

export const laws = {
  linear: ((n, q) => (RATE_PER_CHAR_USD * n) / q.speed) as SpeechLaw,
  minimumCharge: ((n) => Math.max(0.001, Number((RATE_PER_CHAR_USD * n).toFixed(6)))) as SpeechLaw,
  roundedUp4: ((n) => Math.ceil(0.000016 * n * 1e4 - 1e-9) / 1e4) as SpeechLaw,
  tiered: ((n) => Number((Math.min(n, 1000) * 0.00001 + Math.max(0, n - 1000) * 0.000005).toFixed(8))) as SpeechLaw,
  fixedFee: ((n) => Number((0.002 + RATE_PER_CHAR_USD * n).toFixed(8))) as SpeechLaw,
};

/** The JSON body of a price request, as the kind built it. */
function bodyOf<T>(request: ServiceRequest): T {
  if (!('json' in request)) throw new Error(`a price request is JSON, got multipart for ${request.endpoint}`);
  return request.json as T;
}

/** One quote function over both: speech requests go to `speech`, video ones to `video`. */
export function quoteWith(speech: { quote: (request: ServiceRequest) => Promise<number> }, video: { quote: (request: ServiceRequest) => Promise<number> }) {
  return (request: ServiceRequest): Promise<number> => (request.endpoint.startsWith('txt2audio') ? speech.quote(request) : video.quote(request));
}

/** Real quote functions over a law, counting their calls and the concurrency they saw. */
export function speechQuoter(law: SpeechLaw) {
  const state = { calls: 0, inFlight: 0, maxInFlight: 0, counts: [] as number[] };
  const quote = async (request: ServiceRequest): Promise<number> => {
    const query = bodyOf<SpeechPriceQuery>(request);
    state.calls += 1;
    state.inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    state.counts.push(query.count_text);
    await new Promise((resolve) => setImmediate(resolve));
    state.inFlight -= 1;
    return law(query.count_text, query);
  };
  return { state, quote };
}

export function videoQuoter() {
  const state = { calls: 0, queries: [] as VideoPriceQuery[] };
  const quote = async (request: ServiceRequest): Promise<number> => {
    const query = bodyOf<VideoPriceQuery>(request);
    state.calls += 1;
    state.queries.push(query);
    return Number(((query.width * query.height * query.frames * query.steps) / 1e9).toFixed(6));
  };
  return { state, quote };
}

/**
 * Prices jobs as a run does: grouped as the ledger groups them (price group, then each distinct
 * length and how many jobs have it), priced by group, and each job given its key's price back.
 */
export async function priceJobs(jobs: readonly ResolvedJob[], deps: PricingDeps) {
  const groups = new Map<string, PriceGroup>();
  for (const job of jobs) {
    const key = groupKeyOf(job);
    const group = groups.get(key) ?? { key, type: job.type, sample: job, jobs: 0, lengths: [] };
    groups.set(key, group);
    group.jobs += 1;
    if (kindOf(job.type).pricing.by !== 'per-length') continue;
    const chars = job.textChars ?? 0;
    const length = group.lengths.find((l) => l.chars === chars);
    if (length === undefined) group.lengths.push({ chars, jobs: 1 });
    else length.jobs += 1;
  }
  const result = await priceGroups([...groups.values()], deps);
  const byKey = new Map(result.prices.map((p) => [p.priceKey, p]));
  const prices = new Map(
    jobs.map((job) => {
      const key = priceKeyOf(job);
      const found = byKey.get(key);
      if (found === undefined) throw new Error(`no price for ${job.id} (${key})`);
      return [job.id, { priceMicro: found.priceMicro, source: found.source, key }];
    }),
  );
  return { ...result, prices };
}

/**
 * A cost report's input as the ledger would give it for these jobs and prices: one line a job,
 * `alreadyDoneIds` not to send, and what fits in manifest order found over the same lines.
 */
export function costInput(
  jobs: readonly ResolvedJob[],
  priceOf: (job: ResolvedJob) => { priceMicro: number; source?: string },
  over: Partial<Omit<CostReportInput, 'lines' | 'fit'>> & { alreadyDoneIds?: ReadonlySet<string> } = {},
): CostReportInput {
  const { alreadyDoneIds, ...rest } = over;
  const lines: CostLine[] = jobs.map((job) => ({
    type: job.type,
    model: String(job.params['model']),
    groupKey: `g-${job.id}`,
    toSend: !(alreadyDoneIds?.has(job.id) ?? false),
    jobs: 1,
    priceMicro: priceOf(job).priceMicro,
  }));
  const spentMicro = rest.spentMicro ?? 0;
  return {
    lines,
    pricing: { priceCalls: 2, groups: [] },
    spentMicro,
    budgetMicro: null,
    fit: async (budget) => {
      const fit = budgetFit(spentMicro, budget);
      for (const line of lines.filter((l) => l.toSend)) if (!fit.take(line.priceMicro)) break;
      return { count: fit.count, micro: fit.micro };
    },
    plan: planLimits('premium'),
    planName: 'premium',
    concurrency: 8,
    ...rest,
  };
}
