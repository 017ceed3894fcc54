/**
 * What image to video and text to video share: the models that serve both, the checks, the price
 * law and the result. They differ only in the frames a submit carries.
 */
import type { SimModel } from '../catalogue.js';
import type { Check } from '../rules.js';
import { defineKind, type SimKind } from './kind.js';

/** USD per pixel × frame × step, so 768×432×120×1 costs about $0.04. */
const USD_PER_VIDEO_UNIT = 1e-9;

/** A video model's bounds, in the service's order: sizes from 64, guidance 0 to 10. */
const limits = (maxSize: number, maxSteps: number, [minFrames, maxFrames]: [number, number], fps: number) => ({
  min_width: 64, max_width: maxSize, min_height: 64, max_height: maxSize, min_steps: 1, max_steps: maxSteps,
  min_frames: minFrames, max_frames: maxFrames, min_fps: fps, max_fps: fps, min_guidance: 0, max_guidance: 10,
});

const MODELS = [
  {
    name: 'LTX-Video 13B 0.9.8 Distilled FP8',
    slug: 'Ltxv_13B_0_9_8_Distilled_FP8',
    limits: limits(1280, 1, [30, 120], 30),
    features: { supports_last_frame: false },
    defaults: { width: 768, height: 432, steps: 1, frames: 120, fps: 30, guidance: 0 },
  },
  {
    name: 'LTX-2.3 22B Distilled INT8',
    slug: 'Ltx2_3_22B_Dist_INT8',
    limits: limits(1920, 8, [49, 241], 24),
    features: { supports_last_frame: true },
    defaults: { width: 768, height: 432, steps: 8, frames: 121, fps: 24, guidance: 1 },
    priceFactor: 0.5,
  },
];

type Frames = Partial<Record<'firstImageSha256' | 'lastImageSha256', string | null | undefined>>;

/**
 * A video kind; `frames` reads the images its submits carry. A submit's checks beyond the priced
 * fields see the model only once those passed (`model` undefined otherwise).
 */
export function videoKind<T extends string>(
  type: T,
  frames: (c: Check, model: SimModel | undefined) => Promise<Frames> = async () => ({}),
): SimKind<T> {
  return defineKind({
    type,
    models: MODELS,
    check: async (c, forPrice) => {
      const priced = ['width', 'height', 'steps', 'frames', 'fps'].map((field) => c.bounded(field));
      const [width, height, steps, frameCount, fps] = priced;
      const model = c.empty ? c.model : undefined;
      const submit = async () => ({
        prompt: c.string('prompt'),
        negativePrompt: c.optional('negative_prompt'),
        guidance: c.number('guidance', model ? c.range('guidance') : {}),
        seed: c.number('seed', { integer: true, min: -1 }),
        ...(await frames(c, model)),
      });
      return { width, height, steps, frames: frameCount, fps, ...(forPrice ? {} : await submit()) };
    },
    usd: (p) => p.width * p.height * p.frames * p.steps * USD_PER_VIDEO_UNIT * p.model.priceFactor,
    media: 'video',
    plans: { basic: { perMinute: 1, perDay: 15 }, premium: { perMinute: 300 } },
  });
}
