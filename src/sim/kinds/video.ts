/**
 * What the video generation kinds share (image, text and audio to video): the models, the checks,
 * the price law and the result. They differ in the models they take, the media a submit carries
 * and (audio to video) which fields may be left out.
 */
import type { ModelSpec, SimModel } from '../catalogue.js';
import { type Check, isBlank } from '../rules.js';
import { defineKind, type SimKind } from './kind.js';

/** USD per pixel × frame × step, so 768×432×120×1 costs about $0.04. */
const USD_PER_VIDEO_UNIT = 1e-9;

/** A video model's bounds, in the service's order: sizes from 64, guidance 0 to 10. */
const limits = (maxSize: number, maxSteps: number, [minFrames, maxFrames]: [number, number], fps: number) => ({
  min_width: 64, max_width: maxSize, min_height: 64, max_height: maxSize, min_steps: 1, max_steps: maxSteps,
  min_frames: minFrames, max_frames: maxFrames, min_fps: fps, max_fps: fps, min_guidance: 0, max_guidance: 10,
});

const LTXV: ModelSpec = {
  name: 'LTX-Video 13B 0.9.8 Distilled FP8',
  slug: 'Ltxv_13B_0_9_8_Distilled_FP8',
  limits: limits(1280, 1, [30, 120], 30),
  features: { supports_last_frame: false },
  defaults: { width: 768, height: 432, steps: 1, frames: 120, fps: 30, guidance: 0 },
};

/** The one model audio to video takes too. */
export const LTX2: ModelSpec = {
  name: 'LTX-2.3 22B Distilled INT8',
  slug: 'Ltx2_3_22B_Dist_INT8',
  limits: limits(1920, 8, [49, 241], 24),
  features: { supports_last_frame: true },
  defaults: { width: 768, height: 432, steps: 8, frames: 121, fps: 24, guidance: 1 },
  priceFactor: 0.5,
};

type Frames = Partial<Record<'firstImageSha256' | 'lastImageSha256' | 'audioSha256', string | null | undefined>>;

/** The last frame's sha256, where the model supports one (`model` undefined: not yet judged). */
export async function lastFrame(c: Check, model: SimModel | undefined): Promise<string | null | undefined> {
  const prohibited = !isBlank(c.fields['last_frame_image']) && model && model.features['supports_last_frame'] !== true;
  if (prohibited) return c.add('last_frame_image', 'The last frame image field is prohibited.');
  return c.image('last_frame_image', false);
}

/** Where a kind differs: its models, its catalogue name, the numbers a job may leave out. */
interface VideoOptions {
  models?: readonly ModelSpec[];
  catalogueTypes?: readonly string[];
  optional?: readonly ('steps' | 'guidance')[];
}

/**
 * A video kind; `frames` reads the images its submits carry. A submit's checks beyond the priced
 * fields see the model only once those passed (`model` undefined otherwise).
 */
export function videoKind<T extends string>(
  type: T,
  frames: (c: Check, model: SimModel | undefined) => Promise<Frames> = async () => ({}),
  { models = [LTXV, LTX2], catalogueTypes, optional = [] }: VideoOptions = {},
): SimKind<T> {
  // A field a kind lets a job leave out is null when it does.
  const left = (c: Check, field: string) => (optional as string[]).includes(field) && isBlank(c.fields[field]);
  return defineKind({
    type,
    models,
    ...(catalogueTypes === undefined ? {} : { catalogueTypes }),
    check: async (c, forPrice) => {
      const [width, height, frameCount, fps] = ['width', 'height', 'frames', 'fps'].map((field) => c.bounded(field));
      const steps = left(c, 'steps') ? null : c.bounded('steps');
      const model = c.empty ? c.model : undefined;
      const submit = async () => ({
        prompt: c.string('prompt'),
        negativePrompt: c.optional('negative_prompt'),
        guidance: left(c, 'guidance') ? null : c.number('guidance', model ? c.range('guidance') : {}),
        seed: c.number('seed', { integer: true, min: -1 }),
        ...(await frames(c, model)),
      });
      return { width, height, steps, frames: frameCount, fps, ...(forPrice ? {} : await submit()) };
    },
    usd: (p) => {
      const steps = p.steps ?? Number(p.model.defaults['steps']);
      return p.width * p.height * p.frames * steps * USD_PER_VIDEO_UNIT * p.model.priceFactor;
    },
    media: 'video',
    plans: { basic: { perMinute: 1, perDay: 15 }, premium: { perMinute: 300 } },
  });
}
