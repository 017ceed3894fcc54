/**
 * What image to video and text to video share: the models that serve both, the price query and
 * its law, the prompt fields, the fingerprint and the result.
 */
import type { SimModel } from '../catalogue.js';
import { fingerprint } from '../fingerprint.js';
import { applyMode, type PricingMode } from '../pricing.js';
import { mp4StandIn } from '../results.js';
import { ErrorBag, optionalString, requiredNumber, requiredString, type Fields } from '../rules.js';
import { bounded, lookupModel, mapValid, type Validated } from '../validate.js';
import type { Accepted, Models, SimKind } from './kind.js';

/** USD per pixel × frame × step, so 768×432×120×1 costs about $0.04. */
const USD_PER_VIDEO_UNIT = 1e-9;

export interface VideoParams {
  model: SimModel;
  width: number;
  height: number;
  steps: number;
  frames: number;
  fps: number;
  /** The fields below are present on submits only. */
  prompt?: string | undefined;
  negativePrompt?: string | undefined;
  guidance?: number | undefined;
  seed?: number | undefined;
  firstImageSha256?: string | undefined;
  lastImageSha256?: string | undefined;
}

/** Both video kinds are served by the same models. */
const TYPES = ['img2video', 'txt2video'];

const LTXV: SimModel = {
  name: 'LTX-Video 13B 0.9.8 Distilled FP8',
  slug: 'Ltxv_13B_0_9_8_Distilled_FP8',
  types: TYPES,
  limits: {
    min_width: 64, max_width: 1280, min_height: 64, max_height: 1280,
    min_steps: 1, max_steps: 1, min_frames: 30, max_frames: 120, min_fps: 30, max_fps: 30,
    min_guidance: 0, max_guidance: 10,
  },
  features: { supports_last_frame: false },
  defaults: { width: 768, height: 432, steps: 1, frames: 120, fps: 30, guidance: 0 },
  languages: [],
  priceFactor: 1,
};

const LTX2: SimModel = {
  name: 'LTX-2.3 22B Distilled INT8',
  slug: 'Ltx2_3_22B_Dist_INT8',
  types: TYPES,
  limits: {
    min_width: 64, max_width: 1920, min_height: 64, max_height: 1920,
    min_steps: 1, max_steps: 8, min_frames: 49, max_frames: 241, min_fps: 24, max_fps: 24,
    min_guidance: 0, max_guidance: 10,
  },
  features: { supports_last_frame: true },
  defaults: { width: 768, height: 432, steps: 8, frames: 121, fps: 24, guidance: 1 },
  languages: [],
  priceFactor: 0.5,
};

export const VIDEO_MODELS: readonly SimModel[] = [LTXV, LTX2];

/** A video price query: the model and the numbers that set the price. */
export function validateVideoPrice(fields: Fields, models: Models, type: string): Validated<VideoParams> {
  const bag = new ErrorBag();
  const model = lookupModel(bag, fields, models, type);
  const [width, height, steps, frames, fps] = ['width', 'height', 'steps', 'frames', 'fps'].map((f) => bounded(bag, fields, model, f));
  if (!bag.empty || !model || width === undefined || height === undefined || steps === undefined || frames === undefined || fps === undefined) {
    return { ok: false, bag };
  }
  return { ok: true, value: { model, width, height, steps, frames, fps } };
}

/** What a video submit adds to its price query, image or text to video alike. */
export function videoContent(bag: ErrorBag, fields: Fields, model: SimModel | undefined) {
  return {
    prompt: requiredString(bag, fields, 'prompt'),
    negativePrompt: optionalString(bag, fields, 'negative_prompt'),
    guidance: requiredNumber(bag, fields, 'guidance', { min: model?.limits['min_guidance'], max: model?.limits['max_guidance'] }),
    seed: requiredNumber(bag, fields, 'seed', { integer: true, min: -1 }),
  };
}

function priceVideo(p: VideoParams, mode: PricingMode): number {
  return applyMode(p.width * p.height * p.frames * p.steps * USD_PER_VIDEO_UNIT * p.model.priceFactor, mode);
}

/** `type` tells image to video (its frames' hashes) from text to video (none). */
export function acceptVideo(type: string, p: VideoParams, mode: PricingMode): Accepted {
  const canonical = [
    type, p.model.slug, p.width, p.height, p.steps, p.frames, p.fps, p.guidance ?? null, p.seed ?? null,
    p.prompt ?? '', p.negativePrompt ?? '', p.firstImageSha256 ?? '', p.lastImageSha256 ?? '',
  ];
  return { fingerprint: fingerprint(canonical), priceUsd: priceVideo(p, mode) };
}

/** A video kind's fields beyond its type and submit: price, result, pace, plans. */
export function videoKind(type: string): Pick<SimKind, 'price' | 'result' | 'pace' | 'plans'> {
  return {
    price: (fields, models, mode) => mapValid(validateVideoPrice(fields, models, type), (p) => priceVideo(p, mode)),
    result: { ending: 'mp4', contentType: 'video/mp4', bytes: () => mp4StandIn() },
    pace: { pendingMs: 200, processingMs: 1000 },
    plans: { basic: { perMinute: 1, perDay: 15 }, premium: { perMinute: 300 } },
  };
}
