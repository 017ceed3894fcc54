/**
 * The model catalogue the simulator serves: the real slugs and limits (docs/service.md), the shape
 * variations the real service shows (`info: []`, `inference_types` as an object), and filler
 * models so the list spans several pages and a client that ignores pagination misses some.
 */

export interface SimVoice {
  name: string;
  slug: string;
  gender: string;
}

export interface SimLanguage {
  name: string;
  slug: string;
  voices: SimVoice[];
}

export interface SimModel {
  name: string;
  slug: string;
  types: string[];
  /** Serve `inference_types` as an object keyed by type, as some records do. */
  typesAsObject?: boolean;
  /** Serve `info` as `[]` (PHP's empty array), as records without info do. */
  emptyInfo?: boolean;
  limits: Record<string, number>;
  features: Record<string, unknown>;
  defaults: Record<string, unknown>;
  languages: SimLanguage[];
  /** LoRA models a text-to-image model offers (served as `loras`, only where there are any). */
  loras?: { name: string; display_name: string }[];
  /** Multiplies the base price, so models differ in price as they do at the service. */
  priceFactor: number;
}

export const AUDIO_FORMATS = ['mp3', 'wav', 'flac'] as const;
export const SAMPLE_RATES = [8000, 16000, 22050, 24000, 44100, 48000] as const;

const AUDIO_FEATURES = { supported_formats: [...AUDIO_FORMATS], supported_sample_rates: [...SAMPLE_RATES] };
const AUDIO_LIMITS = { min_speed: 0.5, max_speed: 2, min_text: 1, max_text: 5000 };
const AUDIO_DEFAULTS = { speed: 1, format: 'mp3', sample_rate: 24000 };

function voice(slug: string, gender: string): SimVoice {
  const name = slug.replace(/^[a-z]+_/, '');
  return { name: name.charAt(0).toUpperCase() + name.slice(1), slug, gender };
}

const KOKORO: SimModel = {
  name: 'Kokoro 82M',
  slug: 'Kokoro',
  types: ['txt2audio'],
  limits: AUDIO_LIMITS,
  features: AUDIO_FEATURES,
  defaults: { ...AUDIO_DEFAULTS, lang: 'en-us', voice: 'af_sky' },
  languages: [
    { name: 'English (US)', slug: 'en-us', voices: [voice('af_sky', 'female'), voice('af_bella', 'female'), voice('am_adam', 'male')] },
    { name: 'English (UK)', slug: 'en-gb', voices: [voice('bf_emma', 'female'), voice('bm_george', 'male')] },
    { name: 'Spanish', slug: 'es', voices: [voice('ef_dora', 'female')] },
    { name: 'French', slug: 'fr-fr', voices: [voice('ff_siwis', 'female')] },
  ],
  priceFactor: 1,
};

const iso = (name: string, slug: string): SimLanguage => ({ name, slug, voices: [{ name: 'Default', slug: 'default', gender: 'neutral' }] });

const CHATTERBOX: SimModel = {
  name: 'Chatterbox',
  slug: 'Chatterbox',
  types: ['txt2audio'],
  limits: { ...AUDIO_LIMITS, max_text: 3000 },
  features: AUDIO_FEATURES,
  defaults: { ...AUDIO_DEFAULTS, lang: 'en', voice: 'default' },
  languages: [iso('English', 'en'), iso('French', 'fr'), iso('German', 'de'), iso('Spanish', 'es')],
  priceFactor: 1.3,
};

const qwenLanguages = (voices: SimVoice[]): SimLanguage[] =>
  ['English', 'French', 'German', 'Spanish', 'Chinese'].map((name) => ({ name, slug: name, voices }));

const QWEN_CUSTOM: SimModel = {
  name: 'Qwen3 TTS 1.7B Custom Voice',
  slug: 'Qwen3_TTS_12Hz_1_7B_CustomVoice',
  types: ['txt2audio'],
  typesAsObject: true,
  limits: { ...AUDIO_LIMITS, max_text: 4000 },
  features: AUDIO_FEATURES,
  defaults: { ...AUDIO_DEFAULTS, lang: 'English', voice: 'Vivian' },
  languages: qwenLanguages([voice('Vivian', 'female'), voice('Ryan', 'male'), voice('Serena', 'female')]),
  priceFactor: 1.6,
};

// Without info the service states no bounds; the simulator still enforces the common ones.
const QWEN_BASE: SimModel = {
  name: 'Qwen3 TTS 1.7B Base',
  slug: 'Qwen3_TTS_12Hz_1_7B_Base',
  types: ['txt2audio'],
  emptyInfo: true,
  limits: AUDIO_LIMITS,
  features: {},
  defaults: {},
  languages: qwenLanguages([voice('default', 'neutral')]),
  priceFactor: 1.6,
};

const LTXV: SimModel = {
  name: 'LTX-Video 13B 0.9.8 Distilled FP8',
  slug: 'Ltxv_13B_0_9_8_Distilled_FP8',
  types: ['img2video', 'txt2video'],
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
  types: ['img2video', 'txt2video'],
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

// Text to image. Sizes must be multiples of `resolution_step`; a model without guidance support
// takes the field (every request carries it) and ignores it, as diffusion servers commonly do.
const FLUX_SCHNELL: SimModel = {
  name: 'FLUX.1 schnell',
  slug: 'Flux1schnell',
  types: ['txt2img'],
  limits: { min_width: 256, max_width: 2048, min_height: 256, max_height: 2048, resolution_step: 16, min_steps: 1, max_steps: 8 },
  features: { supports_guidance: false, supports_lora: false },
  defaults: { width: 1024, height: 1024, steps: 4, guidance: 0 },
  languages: [],
  priceFactor: 1,
};

const Z_IMAGE_TURBO: SimModel = {
  name: 'Z-Image Turbo INT8',
  slug: 'ZImageTurbo_INT8',
  types: ['txt2img'],
  limits: { min_width: 512, max_width: 2048, min_height: 512, max_height: 2048, resolution_step: 64, min_steps: 4, max_steps: 12 },
  features: { supports_guidance: true, supports_lora: false },
  defaults: { width: 1024, height: 1024, steps: 8, guidance: 3.5 },
  languages: [],
  priceFactor: 0.6,
};

const FLUX_KLEIN: SimModel = {
  name: 'FLUX.2 Klein 4B BF16',
  slug: 'Flux_2_Klein_4B_BF16',
  types: ['txt2img'],
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

const FILLER_TYPES = ['txt2img', 'img2img', 'txt2audio', 'img2txt', 'txt2embedding'] as const;

function fillerModel(index: number): SimModel {
  const type = FILLER_TYPES[index % FILLER_TYPES.length] ?? 'txt2img';
  const n = String(index + 1).padStart(2, '0');
  if (type === 'txt2audio') {
    return {
      name: `Sim Speech ${n}`, slug: `Sim_Speech_${n}`, types: ['txt2audio'],
      limits: AUDIO_LIMITS, features: AUDIO_FEATURES, defaults: { ...AUDIO_DEFAULTS, lang: 'en', voice: 'default' },
      languages: [iso('English', 'en')], priceFactor: 1.1,
    };
  }
  return {
    name: `Sim ${type} ${n}`, slug: `Sim_${type}_${n}`, types: index % 7 === 3 ? [type, 'img2img'] : [type],
    typesAsObject: index % 4 === 1, emptyInfo: index % 3 === 2,
    limits: {}, features: {}, defaults: {}, languages: [], priceFactor: 1,
  };
}

/**
 * The whole catalogue in serving order. Real models are spread through the filler so the
 * last of them sits past the first page of 25.
 */
export function buildCatalogue(extraModels: number): SimModel[] {
  const real = [KOKORO, CHATTERBOX, LTXV, QWEN_CUSTOM, FLUX_SCHNELL, QWEN_BASE, Z_IMAGE_TURBO, LTX2, FLUX_KLEIN];
  const filler = Array.from({ length: Math.max(0, extraModels) }, (_, i) => fillerModel(i));
  const total = real.length + filler.length;
  const out: SimModel[] = [];
  let nextReal = 0;
  let nextFiller = 0;
  for (let i = 0; i < total; i++) {
    // Place real model k at about position k * total / real.length.
    const dueReal = nextReal < real.length && i >= Math.floor((nextReal * total) / real.length);
    const model = dueReal || nextFiller >= filler.length ? real[nextReal++] : filler[nextFiller++];
    if (model) out.push(model);
  }
  return out;
}

/** The record as the service serves it. */
export function modelToWire(model: SimModel): Record<string, unknown> {
  const inferenceTypes = model.typesAsObject
    ? Object.fromEntries(model.types.map((t) => [t, { slug: t }]))
    : model.types;
  return {
    name: model.name,
    slug: model.slug,
    inference_types: inferenceTypes,
    info: model.emptyInfo ? [] : { limits: model.limits, features: model.features, defaults: model.defaults },
    languages: model.languages,
    ...(model.loras === undefined ? {} : { loras: model.loras }),
    tags: [],
    status: 'active',
  };
}
