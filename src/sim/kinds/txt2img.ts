/** Text to image: `POST /txt2img`, JSON; the result is a PNG, served under a URL that does not say so. */
import type { SimModel } from '../catalogue.js';
import { fingerprint } from '../fingerprint.js';
import { applyMode, type PricingMode } from '../pricing.js';
import { pngImage } from '../results.js';
import { ErrorBag, optionalString, requiredNumber, requiredString, type Fields } from '../rules.js';
import { bounded, lookupModel, mapValid, type Validated } from '../validate.js';
import type { Models, SimKind } from './kind.js';

const TYPE = 'txt2img';
/** USD per pixel × step, so a 1024×1024 image in 4 steps costs about $0.004. */
const USD_PER_IMAGE_UNIT = 1e-9;

// Sizes must be multiples of `resolution_step`; a model without guidance support takes the field
// (every request carries it) and ignores it, as diffusion servers commonly do.
const FLUX_SCHNELL: SimModel = {
  name: 'FLUX.1 schnell',
  slug: 'Flux1schnell',
  types: [TYPE],
  limits: { min_width: 256, max_width: 2048, min_height: 256, max_height: 2048, resolution_step: 16, min_steps: 1, max_steps: 8 },
  features: { supports_guidance: false, supports_lora: false },
  defaults: { width: 1024, height: 1024, steps: 4, guidance: 0 },
  languages: [],
  priceFactor: 1,
};

const Z_IMAGE_TURBO: SimModel = {
  name: 'Z-Image Turbo INT8',
  slug: 'ZImageTurbo_INT8',
  types: [TYPE],
  limits: { min_width: 512, max_width: 2048, min_height: 512, max_height: 2048, resolution_step: 64, min_steps: 4, max_steps: 12 },
  features: { supports_guidance: true, supports_lora: false },
  defaults: { width: 1024, height: 1024, steps: 8, guidance: 3.5 },
  languages: [],
  priceFactor: 0.6,
};

const FLUX_KLEIN: SimModel = {
  name: 'FLUX.2 Klein 4B BF16',
  slug: 'Flux_2_Klein_4B_BF16',
  types: [TYPE],
  limits: { min_width: 256, max_width: 1536, min_height: 256, max_height: 1536, resolution_step: 16, min_steps: 4, max_steps: 4 },
  features: { supports_guidance: true, supports_lora: true },
  defaults: { width: 1024, height: 1024, steps: 4, guidance: 3.5 },
  languages: [],
  loras: [
    { name: 'ink_sketch', display_name: 'Ink sketch' },
    { name: 'watercolor', display_name: 'Watercolor' },
  ],
  priceFactor: 1.4,
};

interface ImageParams {
  model: SimModel;
  prompt: string;
  negativePrompt?: string | undefined;
  width: number;
  height: number;
  steps: number;
  guidance: number;
  seed: number;
  loras: { name: string; weight: number }[];
}

/** A size within the model's bounds and a multiple of its `resolution_step`. */
function sized(bag: ErrorBag, fields: Fields, model: SimModel | undefined, field: 'width' | 'height'): number | undefined {
  const value = bounded(bag, fields, model, field);
  const step = model?.limits['resolution_step'];
  if (value !== undefined && step !== undefined && value % step !== 0) return bag.add(field, `The ${field} field must be a multiple of ${step}.`);
  return value;
}

function loraList(bag: ErrorBag, fields: Fields, model: SimModel | undefined): { name: string; weight: number }[] {
  const raw = fields['loras'];
  if (raw === undefined || raw === null || (Array.isArray(raw) && raw.length === 0)) return [];
  if (!Array.isArray(raw)) return bag.add('loras', 'The loras field must be an array.') ?? [];
  if (model !== undefined && (model.loras ?? []).length === 0) return bag.add('loras', 'The loras field is prohibited.') ?? [];
  const offered = new Set((model?.loras ?? []).map((lora) => lora.name));
  const loras: { name: string; weight: number }[] = [];
  raw.forEach((item: unknown, i) => {
    const { name, weight } = (item ?? {}) as { name?: unknown; weight?: unknown };
    if (typeof name !== 'string' || name === '') bag.add(`loras.${i}.name`, `The loras.${i}.name field is required.`);
    else if (model !== undefined && !offered.has(name)) bag.add(`loras.${i}.name`, `The selected loras.${i}.name is invalid.`);
    if (typeof weight !== 'number' || !Number.isFinite(weight)) bag.add(`loras.${i}.weight`, `The loras.${i}.weight field must be a number.`);
    else if (weight < 0) bag.add(`loras.${i}.weight`, `The loras.${i}.weight field must be at least 0.`);
    if (typeof name === 'string' && typeof weight === 'number') loras.push({ name, weight });
  });
  return loras;
}

/** A submit or a price query: both require the same seven fields. */
function validateImage(fields: Fields, models: Models): Validated<ImageParams> {
  const bag = new ErrorBag();
  const model = lookupModel(bag, fields, models, TYPE);
  const prompt = requiredString(bag, fields, 'prompt');
  const negativePrompt = optionalString(bag, fields, 'negative_prompt');
  const width = sized(bag, fields, model, 'width');
  const height = sized(bag, fields, model, 'height');
  const steps = bounded(bag, fields, model, 'steps');
  const guidance = requiredNumber(bag, fields, 'guidance', { min: 0 });
  const seed = requiredNumber(bag, fields, 'seed', { integer: true, min: -1 });
  const loras = loraList(bag, fields, model);
  if (!bag.empty || !model || prompt === undefined || width === undefined || height === undefined || steps === undefined
    || guidance === undefined || seed === undefined) {
    return { ok: false, bag };
  }
  return { ok: true, value: { model, prompt, negativePrompt, width, height, steps, guidance, seed, loras } };
}

/** Grows with the pixels and the steps. Guidance, prompt, seed and LoRAs do not change it. */
function price(p: ImageParams, mode: PricingMode): number {
  return applyMode(p.width * p.height * p.steps * USD_PER_IMAGE_UNIT * p.model.priceFactor, mode);
}

export const txt2img: SimKind<typeof TYPE> = {
  type: TYPE,
  models: [FLUX_SCHNELL, Z_IMAGE_TURBO, FLUX_KLEIN],
  price: (fields, models, mode) => mapValid(validateImage(fields, models), (p) => price(p, mode)),
  submit: (fields, models, mode) => mapValid(validateImage(fields, models), (p) => ({
    fingerprint: fingerprint([TYPE, p.model.slug, p.width, p.height, p.steps, p.guidance, p.seed, p.prompt, p.negativePrompt ?? '', p.loras]),
    priceUsd: price(p, mode),
  })),
  // An image's URL ends in `.image`: the service's URLs say nothing reliable about its type, so clients must read its bytes.
  result: { ending: 'image', contentType: 'image/png', bytes: () => pngImage() },
  pace: { pendingMs: 100, processingMs: 400 },
  plans: { basic: { perMinute: 3, perDay: 100 }, premium: { perMinute: 300 } },
};
