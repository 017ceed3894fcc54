import type { ServiceRequest } from '../../src/api/types.js';
import type { ResolvedJob } from '../../src/jobs/index.js';
import type { PriceCache, PriceCacheRow } from '../../src/pricing/types.js';

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
    images: {},
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
    images: { first_frame_image: { path: '/tmp/a.png', written: 'a.png', contentType: 'image/png', bytes: 10, sha256: 'ab' } },
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
