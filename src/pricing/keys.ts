import type { Img2VideoPriceQuery, Txt2AudioParams, Txt2AudioPriceQuery } from '../api/types.js';
import type { ResolvedJob } from '../manifest/types.js';

export type { Img2VideoPriceQuery, Txt2AudioPriceQuery };

/**
 * Price keys name the parameters a price depends on. The version prefix lets a later change in
 * what a price depends on invalidate every cached price at once instead of reusing wrong ones.
 */
export const PRICE_KEY_VERSION = 'v1';

// Components are URI-encoded so a `|` inside a slug can never make two parameter sets collide.
function join(parts: readonly (string | number)[]): string {
  return parts.map((part) => encodeURIComponent(String(part))).join('|');
}

/** Every txt2audio parameter but the length: jobs in one group differ only by character count. */
export function txt2audioGroupKey(params: Txt2AudioParams): string {
  return join([
    PRICE_KEY_VERSION,
    'txt2audio',
    params.model,
    params.voice,
    params.lang,
    params.speed,
    params.format,
    params.sample_rate,
  ]);
}

export function txt2audioPriceKey(params: Txt2AudioParams, chars: number): string {
  return `${txt2audioGroupKey(params)}|chars=${chars}`;
}

export function img2videoPriceKey(query: Img2VideoPriceQuery): string {
  return join([
    PRICE_KEY_VERSION,
    'img2video',
    query.model,
    query.width,
    query.height,
    query.steps,
    query.frames,
    query.fps,
  ]);
}

/** The key under which a txt2audio group's confirmed linear rate (USD per character) is cached. */
export function rateKey(groupKey: string): string {
  return `${groupKey}|rate`;
}

/** The full price key of one job: what its cached price is stored under. */
export function priceKeyOf(job: ResolvedJob): string {
  return job.type === 'txt2audio'
    ? txt2audioPriceKey(job.params, job.textChars)
    : img2videoPriceKey(img2videoPriceQuery(job.params));
}

/** The price group of one job: txt2audio jobs group by all parameters but length; video by key. */
export function groupKeyOf(job: ResolvedJob): string {
  return job.type === 'txt2audio' ? txt2audioGroupKey(job.params) : priceKeyOf(job);
}

/** The price query for a length: only the count is sent, never the text itself. */
export function txt2audioPriceQuery(params: Txt2AudioParams, chars: number): Txt2AudioPriceQuery {
  return {
    model: params.model,
    voice: params.voice,
    lang: params.lang,
    speed: params.speed,
    format: params.format,
    sample_rate: params.sample_rate,
    count_text: chars,
  };
}

/** Only the six priced fields: prompt, images, guidance and seed do not change the price. */
export function img2videoPriceQuery(params: Img2VideoPriceQuery): Img2VideoPriceQuery {
  return {
    model: params.model,
    width: params.width,
    height: params.height,
    steps: params.steps,
    frames: params.frames,
    fps: params.fps,
  };
}

/**
 * Companion rows of a cached rate: the quotes' precision and the probed range. The cache holds
 * only numbers, so these counts ride in its `priceUsd` column; without all of them the rate is
 * not reused, because deriving outside the probed range would lose the safety argument.
 */
export function rateFactKey(groupKey: string, fact: 'decimals' | 'min-chars' | 'max-chars'): string {
  return `${rateKey(groupKey)}|${fact}`;
}
