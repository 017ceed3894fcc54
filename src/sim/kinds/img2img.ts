/**
 * Image to image: `POST /img2img`, multipart with `image` or `images[]` (not both); the result is
 * a PNG. A price query is JSON without images: what it costs depends on the model and the steps.
 */
import { type Check, IMAGE_UPLOAD } from '../rules.js';
import { defineKind } from './kind.js';
import { KLEIN, loraList } from './txt2img.js';

/** USD per step, so a 40-step Qwen edit costs about $0.008. */
const USD_PER_STEP = 0.0002;

const QWEN_EDIT = {
  name: 'Qwen Image Edit Plus NF4',
  slug: 'QwenImageEdit_Plus_NF4',
  limits: {
    min_width: 256, max_width: 2048, min_height: 256, max_height: 2048,
    min_steps: 1, max_steps: 50, max_input_images: 3,
  },
  features: { supports_guidance: true, supports_lora: false },
  defaults: { steps: 40, guidance: 4 },
};

/** Null when left out. */
function optionalInt(c: Check, field: string): number | null | undefined {
  const value = c.fields[field];
  return value === undefined || value === null || value === '' ? null : c.bounded(field);
}

/** The image, or the images (as many as the model takes, one unless it says): their hashes. */
async function sources(c: Check): Promise<string[] | undefined> {
  const [one, many] = [c.fields['image'], c.fields['images']];
  if ((one === undefined || one === null) === (many === undefined || many === null)) {
    return one === undefined || one === null
      ? c.add('image', 'The image field is required when images is not present.')
      : c.add('image', 'The image field prohibits images from being present.');
  }
  const most = c.model?.limits['max_input_images'] ?? 1;
  if (Array.isArray(many) && many.length > most) {
    return c.add('images', `The images field must not have more than ${most} items.`);
  }
  const single = one !== undefined && one !== null;
  const uploads = single ? [await c.upload('image', true, IMAGE_UPLOAD)] : await c.uploads('images', IMAGE_UPLOAD);
  return uploads?.every((upload) => upload) ? uploads.map((upload) => upload!.sha256) : undefined;
}

/** What only a submit carries: the images and the size of the result. */
async function edit(c: Check) {
  return { width: optionalInt(c, 'width'), height: optionalInt(c, 'height'), imagesSha256: await sources(c) };
}

export const img2img = defineKind({
  type: 'img2img',
  models: [KLEIN, QWEN_EDIT],
  // Both require the prompt, steps and seed; guidance, the negative prompt and LoRAs are optional.
  check: async (c, forPrice) => ({
    prompt: c.string('prompt'),
    negativePrompt: c.optional('negative_prompt'),
    steps: c.bounded('steps'),
    guidance: [undefined, null].includes(c.fields['guidance'] as never) ? null : c.number('guidance', { min: 0 }),
    seed: c.number('seed', { integer: true, min: -1 }),
    loras: loraList(c),
    ...(forPrice ? {} : await edit(c)),
  }),
  usd: (p) => p.steps * USD_PER_STEP * p.model.priceFactor,
  media: 'image',
  plans: { basic: { perMinute: 1, perDay: 15 }, premium: { perMinute: 300 } },
});
