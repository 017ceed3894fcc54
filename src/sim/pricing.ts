/**
 * The simulator's price laws. 'linear' follows the published rate; 'minimum' and 'rounded'
 * break linearity in the ways a real price list might, so clients that derive prices from
 * probes must notice and fall back to quoting.
 */
import type { AudioParams, ImageParams, VideoParams } from './validate.js';

export type PricingMode = 'linear' | 'minimum' | 'rounded';

/** USD per character at speed 1 (the published rate: about $0.77 per million characters). */
const USD_PER_CHAR = 0.77e-6;
/** USD per pixel × frame × step, so 768×432×120×1 costs about $0.04. */
const USD_PER_VIDEO_UNIT = 1e-9;
const MINIMUM_USD = 0.0005;
/** USD per pixel × step, so a 1024×1024 image in 4 steps costs about $0.004. */
const USD_PER_IMAGE_UNIT = 1e-9;

const round8 = (usd: number): number => Math.round(usd * 1e8) / 1e8;

function applyMode(linearUsd: number, mode: PricingMode): number {
  switch (mode) {
    case 'linear':
      return round8(linearUsd);
    case 'minimum':
      return round8(Math.max(MINIMUM_USD, linearUsd));
    case 'rounded':
      // The small epsilon keeps 0.0012 from becoming 0.0013 through float noise.
      return Math.ceil(round8(linearUsd) * 1e4 - 1e-9) / 1e4;
  }
}

export function priceAudio(params: Pick<AudioParams, 'model' | 'chars' | 'speed'>, mode: PricingMode): number {
  return applyMode((params.chars * USD_PER_CHAR * params.model.priceFactor) / params.speed, mode);
}

export function priceVideo(params: Pick<VideoParams, 'model' | 'width' | 'height' | 'frames' | 'steps'>, mode: PricingMode): number {
  const units = params.width * params.height * params.frames * params.steps;
  return applyMode(units * USD_PER_VIDEO_UNIT * params.model.priceFactor, mode);
}

/** Text to image: grows with the pixels and the steps. Guidance, prompt, seed and LoRAs do not change it. */
export function priceImage(params: Pick<ImageParams, 'model' | 'width' | 'height' | 'steps'>, mode: PricingMode): number {
  return applyMode(params.width * params.height * params.steps * USD_PER_IMAGE_UNIT * params.model.priceFactor, mode);
}
