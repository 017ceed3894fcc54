/** Text to image: `POST /txt2img`, JSON; the result is a PNG, served under a URL that does not say so. */
import type { Check } from '../rules.js';
import { defineKind } from './kind.js';

/** USD per pixel × step, so a 1024×1024 image in 4 steps costs about $0.004. */
const USD_PER_IMAGE_UNIT = 1e-9;

/** A size within the model's bounds and a multiple of its `resolution_step`. */
function sized(c: Check, field: 'width' | 'height'): number | undefined {
  const value = c.bounded(field);
  const step = c.model?.limits['resolution_step'];
  if (value !== undefined && step !== undefined && value % step !== 0) {
    return c.add(field, `The ${field} field must be a multiple of ${step}.`);
  }
  return value;
}

/** The LoRAs asked for, each offered by the model; a multipart weight arrives as text. */
export function loraList(c: Check): { name: string; weight: number }[] {
  const raw = c.fields['loras'];
  if (raw === undefined || raw === null || (Array.isArray(raw) && raw.length === 0)) return [];
  if (!Array.isArray(raw)) return c.add('loras', 'The loras field must be an array.') ?? [];
  const offered = c.model && (c.model.loras ?? []).map((lora) => lora.name);
  if (offered?.length === 0) return c.add('loras', 'The loras field is prohibited.') ?? [];
  const loras: { name: string; weight: number }[] = [];
  raw.forEach((item: unknown, i) => {
    const { name, weight: given } = (item ?? {}) as { name?: unknown; weight?: unknown };
    const weight = typeof given === 'string' && given.trim() !== '' ? Number(given) : given;
    const [n, w] = [`loras.${i}.name`, `loras.${i}.weight`];
    if (typeof name !== 'string' || name === '') c.add(n, `The ${n} field is required.`);
    else if (offered && !offered.includes(name)) c.add(n, `The selected ${n} is invalid.`);
    if (typeof weight !== 'number' || !Number.isFinite(weight)) c.add(w, `The ${w} field must be a number.`);
    else if (weight < 0) c.add(w, `The ${w} field must be at least 0.`);
    if (typeof name === 'string' && typeof weight === 'number') loras.push({ name, weight });
  });
  return loras;
}

const SIZES = { min_width: 256, max_width: 2048, min_height: 256, max_height: 2048 };

/** FLUX.2 Klein edits images as well as making them: one record serves both kinds. */
export const KLEIN = {
  name: 'FLUX.2 Klein 4B BF16',
  slug: 'Flux_2_Klein_4B_BF16',
  limits: { ...SIZES, max_width: 1536, max_height: 1536, resolution_step: 16, min_steps: 4, max_steps: 4 },
  features: { supports_guidance: true, supports_lora: true },
  defaults: { width: 1024, height: 1024, steps: 4, guidance: 3.5 },
  loras: [
    { name: 'ink_sketch', display_name: 'Ink sketch' },
    { name: 'watercolor', display_name: 'Watercolor' },
  ],
  priceFactor: 1.4,
};

export const txt2img = defineKind({
  type: 'txt2img',
  // Sizes must be multiples of `resolution_step`; a model without guidance support takes the field
  // (every request carries it) and ignores it, as diffusion servers commonly do.
  models: [
    {
      name: 'FLUX.1 schnell',
      slug: 'Flux1schnell',
      limits: { ...SIZES, resolution_step: 16, min_steps: 1, max_steps: 8 },
      features: { supports_guidance: false, supports_lora: false },
      defaults: { width: 1024, height: 1024, steps: 4, guidance: 0 },
    },
    {
      name: 'Z-Image Turbo INT8',
      slug: 'ZImageTurbo_INT8',
      limits: { ...SIZES, min_width: 512, min_height: 512, resolution_step: 64, min_steps: 4, max_steps: 12 },
      features: { supports_guidance: true, supports_lora: false },
      defaults: { width: 1024, height: 1024, steps: 8, guidance: 3.5 },
      priceFactor: 0.6,
    },
    KLEIN,
  ],
  // A submit and a price query require the same seven fields.
  check: (c) => ({
    prompt: c.string('prompt'),
    negativePrompt: c.optional('negative_prompt'),
    width: sized(c, 'width'),
    height: sized(c, 'height'),
    steps: c.bounded('steps'),
    guidance: c.number('guidance', { min: 0 }),
    seed: c.number('seed', { integer: true, min: -1 }),
    loras: loraList(c),
  }),
  // Grows with the pixels and the steps. Guidance, prompt, seed and LoRAs do not change it.
  usd: (p) => p.width * p.height * p.steps * USD_PER_IMAGE_UNIT * p.model.priceFactor,
  media: 'image',
  plans: { basic: { perMinute: 3, perDay: 100 }, premium: { perMinute: 300 } },
});
